"""A daemon that takes a hook's request and never answers (stopped with SIGSTOP): on the local
store the hook answers in-process; on a team server, whose slowness is what froze the daemon,
it gives up within its budget instead of waiting for the server a second time."""

import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import DECISION, Cli, use_server
from tests.daemon._support import Daemons
from tests.hooks._support import run_hook, user_prompt


@pytest.fixture
def frozen(daemons: Daemons, run: Cli, repo: Path) -> Iterator[int]:
    run.json(*DECISION)
    pid = int(daemons.start()["pid"])
    os.kill(pid, signal.SIGSTOP)
    try:
        yield pid
    finally:
        os.kill(pid, signal.SIGCONT)


@pytest.mark.usefixtures("frozen")
def test_on_the_local_store_a_frozen_daemon_is_answered_for_in_process(repo: Path) -> None:
    done = run_hook("prompt", user_prompt(repo, "how does the task queue deliver work"), cwd=repo)
    assert done.returncode == 0
    assert "JetStream" in done.context


@pytest.mark.usefixtures("frozen")
def test_on_a_team_server_a_frozen_daemon_ends_the_hook_in_its_budget(
    repo: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as listener:  # a server that takes connections and never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        use_server(home, f"postgresql://alice@127.0.0.1:{listener.getsockname()[1]}/contextd")
        monkeypatch.setenv("PGPASSWORD", "not-needed")
        done = run_hook("prompt", user_prompt(repo, "how does the task queue deliver"), cwd=repo)
    assert (done.returncode, done.stdout) == (0, b"")
    log = (home / "hook.log").read_text(encoding="utf-8")
    assert "team server did not answer" in log
    assert "StoreError" not in log  # no second wait, in-process, on the same server
