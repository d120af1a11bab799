"""A daemon left running across an upgrade runs other contextd code than its clients: it
declines them, `doctor` and `daemon status` say so with the command to run, and the next
hook that reaches it replaces it with a daemon of the new code, so hooks do not run cold for
the rest of the day."""

import shutil
import subprocess
import sys
import time
from pathlib import Path

import contextd
from contextd.wire import to_daemon
from tests.conftest import DECISION, Cli
from tests.daemon._support import Daemons, wait_gone
from tests.hooks._support import hook_env, run_hook, user_prompt


def test_an_outdated_daemon_is_named_and_replaced_by_the_next_hook(
    daemons: Daemons, repo: Path, run: Cli, home: Path, tmp_path: Path
) -> None:
    run.json(*DECISION)
    older = tmp_path / "older"  # the installed code before the upgrade: another copy
    shutil.copytree(Path(contextd.__file__).parent, older / "contextd")
    started = daemons.start(env=hook_env(PYTHONPATH=str(older)))
    old_pid = int(started["pid"])
    assert to_daemon.ask(str(home), {"kind": "ping"}) is not None
    status = run.json("daemon", "status")
    assert status["pid"] == old_pid and status["outdated"] is True
    assert "it started before an upgrade" in run("daemon", "status").stdout
    doctor = subprocess.run(
        [sys.executable, "-m", "contextd", "doctor"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=repo,
        env=hook_env(),
        timeout=60,
        check=False,
    )
    assert "contextd daemon stop && contextd daemon start" in doctor.stdout
    assert "No problems found" not in doctor.stdout and doctor.returncode != 0
    prompt = user_prompt(repo, "Why did we pick NATS for the task queue?")
    out = run_hook("prompt", prompt, cwd=repo)
    assert b"NATS" in out.stdout  # answered in-process this once
    assert wait_gone(old_pid, 15.0)
    deadline, new_pid = time.monotonic() + 60, None
    while new_pid is None and time.monotonic() < deadline:
        new_pid = daemons.adopt_running()
        time.sleep(0.1)
    assert new_pid is not None and new_pid != old_pid
    assert run.json("daemon", "status")["outdated"] is False
