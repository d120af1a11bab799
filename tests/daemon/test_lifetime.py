"""The daemon leaves on its own: after `[daemon] idle_exit` without a request, and at once
when its home or store goes away; a command that starts one says so on stderr, once."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contextd.config import load_settings
from contextd.daemon.lifetime import CHECK_S, Lifetime
from contextd.errors import ConfigError
from contextd.ids import new_id
from contextd.wire.launch import running
from tests.conftest import DECISION, Cli
from tests.daemon._support import Daemons, alive, ask_hook, wait_gone
from tests.hooks._support import (
    BASE_CONFIG,
    configure,
    hook_env,
    run_hook,
    session_start,
    user_prompt,
)
from tests.share._team import git

PROMPT = "Why did we pick NATS for the task queue after the deploy issues?"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_idle_time_counts_from_the_last_request_and_a_live_session(tmp_path: Path) -> None:
    clock = Clock()
    life = Lifetime(tmp_path, None, idle_s=60, clock=clock)
    clock.now += 59
    assert life.reason(busy=False) is None
    life.touch()
    clock.now += 59
    assert life.reason(busy=False) is None
    clock.now += 2
    assert "idle_exit" in (life.reason(busy=False) or "")
    clock.now += 3600
    assert life.reason(busy=True) is None  # a hosted session keeps it
    clock.now += 59
    assert life.reason(busy=False) is None
    never = Lifetime(tmp_path, None, idle_s=0, clock=clock)
    clock.now += 10**9
    assert never.reason(busy=False) is None


def test_a_home_or_store_that_goes_away_is_noticed_by_stat(tmp_path: Path) -> None:
    clock = Clock()
    home = tmp_path / "elsewhere"
    home.mkdir()
    store = home / "contextd.db"
    life = Lifetime(home, store, idle_s=0, clock=clock)  # no store yet: adopted when made
    store.write_bytes(b"x")
    clock.now += CHECK_S
    assert life.reason(busy=False) is None
    store.unlink()
    assert life.reason(busy=False) is None  # only looked at every CHECK_S
    clock.now += CHECK_S
    assert "store" in (life.reason(busy=False) or "")

    other = Lifetime(home, None, idle_s=0, clock=clock)
    os.rename(home, tmp_path / "moved")
    home.mkdir()  # the same path, another folder
    clock.now += CHECK_S
    assert "replaced" in (other.reason(busy=False) or "")


@pytest.mark.parametrize("value", ["3 hours", "-5m", "1.5h", "soon"])
def test_a_bad_idle_time_is_one_sentence(home: Path, value: str) -> None:
    configure(home, f'[daemon]\nidle_exit = "{value}"\n')
    with pytest.raises(ConfigError, match=r"daemon.idle_exit takes a length of time"):
        load_settings()


def test_idle_times_read_as_a_person_writes_them(home: Path) -> None:
    for text, seconds in (("90s", 90), ("30m", 1800), ("3h", 10800), ("1d", 86400), ("off", 0)):
        configure(home, f'[daemon]\nidle_exit = "{text}"\n[sync]\npull_every = "{text}"\n')
        settings = load_settings()
        assert settings.daemon.idle_exit_s == seconds
        assert settings.sync.pull_every_s == seconds
    configure(home)
    assert load_settings().daemon.idle_exit_s == 3 * 3600  # the default
    assert load_settings().sync.pull_every_s == 0


def test_an_idle_daemon_exits(daemons: Daemons, repo: Path, run: Cli, home: Path) -> None:
    configure(home, '[daemon]\nidle_exit = "3s"\n')
    run.json(*DECISION)
    pid = int(daemons.start()["pid"])
    # Asked now and then, it stays.
    for _ in range(3):
        time.sleep(1.5)
        payload = json.dumps(user_prompt(repo, PROMPT)).encode("utf-8")
        assert ask_hook(home, "prompt", payload, repo) is not None
    assert alive(pid)
    assert wait_gone(pid, 15), "the idle daemon did not exit"
    assert not running(home)
    assert not (home / "daemon.pid").exists() and not (home / "daemon.sock").exists()
    assert "[daemon] idle_exit" in (home / "daemon.log").read_text(encoding="utf-8")
    assert run.json("daemon", "status") == {"running": False}


def test_a_daemon_whose_home_is_deleted_exits_at_once(
    daemons: Daemons, repo: Path, run: Cli, home: Path
) -> None:
    run.json(*DECISION)  # the default idle time: hours
    pid = int(daemons.start()["pid"])
    shutil.rmtree(home)
    assert wait_gone(pid, 3 * CHECK_S + 2), "the daemon outlived its home"


def test_a_daemon_whose_home_is_replaced_exits_and_leaves_the_new_one_alone(
    daemons: Daemons, repo: Path, run: Cli, home: Path, tmp_path: Path
) -> None:
    run.json(*DECISION)
    pid = int(daemons.start()["pid"])
    os.rename(home, tmp_path / "old-home")
    home.mkdir(mode=0o700)
    configure(home)
    (home / "daemon.pid").write_text("12345", encoding="utf-8")  # as if another daemon's
    assert wait_gone(pid, 3 * CHECK_S + 2), "the daemon outlived its home"
    assert (home / "daemon.pid").read_text(encoding="utf-8") == "12345"


def test_a_daemon_whose_store_is_deleted_exits(
    daemons: Daemons, repo: Path, run: Cli, home: Path
) -> None:
    run.json(*DECISION)
    pid = int(daemons.start()["pid"])
    for name in ("contextd.db", "contextd.db-wal", "contextd.db-shm"):
        (home / name).unlink(missing_ok=True)
    assert wait_gone(pid, 3 * CHECK_S + 2), "the daemon outlived its store"
    assert "was deleted or replaced" in (home / "daemon.log").read_text(encoding="utf-8")


def _contextd(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "contextd", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        env=hook_env(),
        timeout=120,
        check=False,
    )


def test_a_command_says_when_it_started_the_daemon_and_only_then(
    daemons: Daemons, repo: Path, run: Cli, home: Path
) -> None:
    """A teammate's new record file arrives without a vector: the command that takes it in
    starts the daemon to fill it, and says so on stderr; its stdout stays the JSON."""
    run.json("share")
    git(repo, "config", "user.email", "a@example.com")
    git(repo, "config", "user.name", "A")
    run.json(*DECISION)
    (home / "config.toml").write_text(
        BASE_CONFIG.replace("autostart_daemon = false", "autostart_daemon = true")
        + '[daemon]\nidle_exit = "2h"\n',
        encoding="utf-8",
    )
    records = repo / ".contextd" / "records"
    mine = next(records.glob("*.md"))

    def teammate_writes(title: str) -> None:
        ident = new_id()
        text = mine.read_text(encoding="utf-8").replace(mine.stem, ident)
        (records / f"{ident}.md").write_text(
            text.replace("Use NATS for the task queue", title), encoding="utf-8"
        )

    teammate_writes("Keep task payloads under one megabyte")

    first = _contextd(repo, "memories", "--json")
    assert first.returncode == 0, first.stderr
    assert first.stdout.lstrip().startswith(("{", "["))
    assert first.stderr.count("Started the contextd daemon") == 1, first.stderr
    assert "it stops after 2h idle; `contextd daemon stop` ends it" in first.stderr
    deadline = time.monotonic() + 60
    while daemons.adopt_running() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert daemons.adopt_running() is not None

    # Another file arrives while it runs: nothing to say.
    teammate_writes("Retry a failed task three times")
    again = _contextd(repo, "memories", "--json")
    assert again.returncode == 0 and "Started" not in again.stderr
    assert len(json.loads(again.stdout)["records"]) == 3


def test_daemon_status_says_how_long_it_was_idle_and_when_it_stops(
    daemons: Daemons, repo: Path, run: Cli, home: Path
) -> None:
    configure(home, '[daemon]\nidle_exit = "90m"\n')
    daemons.start()
    status = run.json("daemon", "status")
    assert status["idle_exit_s"] == 5400 and 0 <= status["idle_s"] < 60
    assert "it stops after 1.5 h unasked." in run("daemon", "status").output


def test_a_hook_that_starts_the_daemon_says_nothing_on_either_stream(
    daemons: Daemons, repo: Path, run: Cli, home: Path
) -> None:
    run.json(*DECISION)
    (home / "config.toml").write_text(
        BASE_CONFIG.replace("autostart_daemon = false", "autostart_daemon = true"),
        encoding="utf-8",
    )
    briefed = run_hook("session-start", session_start(repo), cwd=repo)
    assert "Use NATS for the task queue" in briefed.context  # the JSON the agent parses
    assert briefed.stderr == b""
    deadline = time.monotonic() + 60
    while daemons.adopt_running() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert daemons.adopt_running() is not None
