"""A team server that accepts connections and never answers (a real listening socket that
reads nothing): a hook gives up within its budget, prints nothing and exits 0, with one line
in hook.log; a command fails in one sentence naming the server."""

import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from contextd.app import open_app
from contextd.config import load_settings
from contextd.errors import StoreError
from contextd.storage.postgres.database import WRITER_LOCK
from tests.conftest import Cli, make_repo, use_server


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A loopback port whose listener completes every TCP handshake (the kernel's backlog)
    and never reads or writes a byte."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        yield int(listener.getsockname()[1])


@pytest.fixture
def away_home(
    home: Path, silent_server: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    use_server(home, f"postgresql://alice@127.0.0.1:{silent_server}/contextd")
    monkeypatch.setenv("PGPASSWORD", "not-needed")
    monkeypatch.chdir(make_repo(tmp_path / "orbit"))
    return home


def _hook(home: Path, event: str, payload: dict[str, object]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "contextd", "hook", event],
        input=json.dumps(payload),
        env={**os.environ, "CONTEXTD_HOME": str(home)},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("event", ["prompt", "session-start"])
def test_a_hook_gives_up_on_a_silent_server_within_its_budget(away_home: Path, event: str) -> None:
    payload = {"prompt": "how do we deploy the billing worker", "cwd": str(Path.cwd())}
    done = _hook(away_home, event, payload)
    assert (done.returncode, done.stdout) == (0, "")
    lines = (away_home / "hook.log").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1, lines
    found = re.search(rf"hook {event} failed after ([0-9.]+) s: StoreError: (.*)$", lines[0])
    assert found, lines[0]
    # libpq waits 2 s at the least for a connection: the hook gives it 0.5 s (the wall time
    # this takes on a loaded machine is the watchdog's to bound: test_fail_open).
    assert "did not answer within 0.5 s" in found.group(2)
    assert float(found.group(1)) < {"prompt": 4.0, "session-start": 10.0}[event]


def test_a_command_names_the_silent_server_in_one_sentence(away_home: Path, run: Cli) -> None:
    result = run("memories")
    assert result.exit_code == 6
    message = result.output.strip()
    assert message.startswith(
        "Error: Cannot reach the contextd server at postgresql://alice@127.0.0.1:"
    )
    assert "did not answer within 5 s" in message and "\n" not in message


def test_with_a_hook_s_budget_a_write_behind_a_stuck_writer_fails_in_time(
    pg_url: str, home: Path, tmp_path: Path
) -> None:
    use_server(home, pg_url)
    repo = make_repo(tmp_path / "orbit")
    with open_app(load_settings(cwd=repo)) as app:
        app.projects.attach(repo)
    with psycopg.connect(pg_url, autocommit=True) as writer:
        # Another machine's write that never ends: it holds the writers' lock; the lock is
        # let go after 20 s, so contextd without a statement budget waits and then succeeds.
        writer.execute("SELECT pg_advisory_lock(%s)", (WRITER_LOCK,))
        release = threading.Timer(20, lambda: writer.execute("SELECT pg_advisory_unlock_all()"))
        release.start()
        try:
            with open_app(load_settings(cwd=repo), busy_timeout_ms=500) as app:
                with pytest.raises(StoreError) as refused:
                    app.sessions.start(app.current_project(), "claude-code")
                assert "stayed busy with another writer" in str(refused.value)
                with pytest.raises(StoreError) as slow:
                    app.db.connection().execute("SELECT pg_sleep(5)")
                assert "stayed busy" in str(slow.value)
        finally:
            release.cancel()
