"""`[sync] pull_every`: a real daemon pulls the configured remotes through a real sshd on its
own thread, logs what it merged, skips a remote that fails (and tries it again next
interval), and `status` says when each was last pulled and what that gave."""

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from contextd.sync.schedule import read_results
from tests.daemon._support import Daemons, ask_hook
from tests.hooks._support import user_prompt
from tests.sync.conftest import NOTES, Machine, add_remote, lab, laptop, sshd, sshd_server
from tests.sync.sshd import SshServer

__all__ = ["lab", "laptop", "sshd", "sshd_server"]  # the sync tests' fixtures, used here


def _wait_for(check: Callable[[], bool], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.25)
    raise AssertionError("it did not happen in time")


@pytest.fixture
def puller(laptop: Machine, tmp_path: Path) -> Iterator[Daemons]:
    folder = tmp_path / "work" / "orbit"
    laptop.attach(folder)
    control = Daemons(laptop.home, folder)
    yield control
    control.shutdown()


@pytest.mark.slow
def test_the_daemon_pulls_each_remote_on_schedule_and_status_says_so(
    laptop: Machine, lab: Machine, sshd: SshServer, tmp_path: Path, puller: Daemons
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    first = lab.note(NOTES[0])
    add_remote(laptop, "lab", lab, sshd)
    slow = tmp_path / "slow-contextd"  # a remote that answers after 4 s, with a failure
    slow.write_text("#!/bin/sh\nsleep 4\necho 'no store here' >&2\nexit 3\n", encoding="utf-8")
    slow.chmod(0o755)
    assert (
        laptop("remote", "add", "away", "lab", "--command", str(slow), *sshd.options).exit_code == 0
    )
    config = laptop.home / "config.toml"
    config.write_text(
        config.read_text(encoding="utf-8") + '[sync]\npull_every = "6s"\n', encoding="utf-8"
    )

    puller.start()
    # The slow remote comes first (by name); while the daemon waits on it, a prompt is
    # answered at once.
    payload = json.dumps(user_prompt(puller.cwd, "Which transport does the GPU scheduler use?"))
    started = time.monotonic()
    assert ask_hook(laptop.home, "prompt", payload.encode("utf-8"), puller.cwd) is not None
    assert time.monotonic() - started < 2.0
    assert "away" not in read_results(laptop.home)  # still waiting on it

    def log() -> str:
        return (laptop.home / "daemon.log").read_text(encoding="utf-8")

    _wait_for(lambda: first in laptop.records())
    _wait_for(lambda: "scheduled pull from lab merged: 1 added" in log())
    away = read_results(laptop.home)["away"]
    assert not away.ok and "no store here" in away.error
    assert "scheduled pull from away failed" in log()

    # The next interval brings what lab wrote since, and tries the failing remote again.
    second = lab.note(NOTES[1])
    _wait_for(lambda: second in laptop.records(), 90)
    _wait_for(lambda: read_results(laptop.home)["away"].at > away.at, 90)

    status = laptop.json("status", "--project", "orbit")
    remotes = {r["name"]: r for r in status["remotes"]}
    assert remotes["lab"]["last_pull_at"] and remotes["lab"]["pull_every"] == "6s"
    assert remotes["lab"]["last_try"]["ok"] is True
    assert remotes["away"]["last_pull_at"] is None and remotes["away"]["last_try"]["ok"] is False
    assert remotes["away"]["next_try_at"] > remotes["away"]["last_try"]["at"]
    text = laptop("status", "--project", "orbit").output
    assert "lab: pulled just now; every 6s, tried just now:" in text
    assert "away: pulled never; every 6s, tried just now: failed:" in text


def test_without_pull_every_nothing_is_pulled(
    laptop: Machine, lab: Machine, sshd: SshServer, tmp_path: Path, puller: Daemons
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    lab.note(NOTES[0])
    add_remote(laptop, "lab", lab, sshd)
    puller.start()
    time.sleep(3)
    assert laptop.records() == {}
    assert read_results(laptop.home) == {}
    status = laptop.json("status", "--project", "orbit")
    assert status["remotes"] == [
        {
            "name": "lab",
            "last_pull_at": None,
            "pull_every": None,
            "last_try": None,
            "next_try_at": None,
        }
    ]
    assert "lab: pulled never" in laptop("status", "--project", "orbit").output
