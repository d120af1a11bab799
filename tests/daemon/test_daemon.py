"""`contextd daemon start|status|stop|run` as real processes, and the hooks it answers."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from contextd.wire import frames, to_daemon
from tests.conftest import DECISION, POSTGRES, Cli
from tests.daemon._support import Daemons, alive, ask_hook, exchange, wait_gone
from tests.hooks._support import (
    BASE_CONFIG,
    hook_env,
    run_hook,
    session_start,
    user_prompt,
)
from tests.hooks.agent_payloads import cursor_session_start

QUEUE_PROMPT = "Why did we pick NATS for the task queue after the deploy issues?"


def _hook_via_entry(repo: Path, payload: dict[str, Any]) -> tuple[str, list[str]]:
    """Run the hook entry in a fresh interpreter; its stdout and the modules it imported."""
    script = (
        "import json, sys\n"
        "before = set(sys.modules)\n"
        "from contextd.__main__ import _hook_failure, _hook_in_process\n"
        "from contextd.client.hook import run_hook\n"
        "code = run_hook(['prompt'], _hook_in_process, _hook_failure)\n"
        "sys.stderr.write(json.dumps(sorted(set(sys.modules) - before)))\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=repo,
        env=hook_env(),
        timeout=60,
        check=True,
    )
    modules = json.loads(done.stderr)
    assert isinstance(modules, list)
    return done.stdout, modules


def test_the_daemon_lifecycle_and_the_hooks_it_answers(
    daemons: Daemons, repo: Path, run: Cli, home: Path, tmp_path: Path
) -> None:
    decision = run.json(*DECISION)["id"]
    started = daemons.start()
    assert started["action"] == "started"
    pid = int(started["pid"])
    assert alive(pid)
    assert started["socket"] == str(home / "daemon.sock")
    assert Path(started["socket"]).is_socket()
    assert (home / "daemon.socket").read_text(encoding="utf-8") == f"{home}/daemon.sock\n"

    status = run.json("daemon", "status")
    assert status["running"] is True and status["pid"] == pid
    assert isinstance(status["rss_mb"], float) and 0 < status["rss_mb"] < 200
    assert status["uptime_s"] >= 0

    again = daemons.start()
    assert again == {"action": "already running", "pid": pid, "socket": started["socket"]}
    # A second foreground daemon sees the lock and leaves at once.
    second = subprocess.run(
        [sys.executable, "-m", "contextd", "daemon", "run"],
        capture_output=True,
        cwd=repo,
        env=hook_env(),
        timeout=60,
        check=False,
    )
    assert second.returncode == 0
    assert run.json("daemon", "status")["pid"] == pid

    # A real prompt hook, answered by the daemon: the hook process never loaded the store.
    # (Hashing vectors are no judge of meaning: the prompt restates the record's problem.)
    prompt = DECISION[3] + ": what did we do about it?"
    reply, modules = _hook_via_entry(repo, user_prompt(repo, prompt, "sess-d"))
    context = json.loads(reply)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith('<working-memory project="orbit">') and decision in context
    assert "contextd.app" not in modules and "sqlite3" not in modules
    foreign = [m for m in modules if m.split(".")[0] not in {"contextd", *sys.stdlib_module_names}]
    assert foreign == []

    # A record the CLI writes now is in the daemon's very next answer.
    written = run.json(*POSTGRES)
    prompt_payload = json.dumps(user_prompt(repo, POSTGRES[3], "sess-d2")).encode()
    answer = ask_hook(home, "prompt", prompt_payload, repo)
    assert answer is not None and written["id"] in answer.decode("ascii")
    # The project asked for by name ($CONTEXTD_PROJECT of the hook) from a folder of none.
    loose = tmp_path / "loose"
    loose.mkdir()
    start_payload = json.dumps(session_start(loose)).encode()
    briefing = ask_hook(home, "session-start", start_payload, loose, project="orbit")
    assert briefing is not None and written["id"] in briefing.decode("ascii")
    # Without a cwd in the payload, the folder the hook runs in picks the project.
    no_cwd = {k: v for k, v in session_start(loose).items() if k != "cwd"}
    from_folder = ask_hook(home, "session-start", json.dumps(no_cwd).encode(), repo)
    assert from_folder is not None and written["id"] in from_folder.decode("ascii")
    # Cursor's payload names the project in workspace_roots; Claude Code's CLAUDE_PROJECT_DIR
    # travels as project_dirs: the daemon reads both, as the in-process path does.
    cursor = json.dumps(cursor_session_start([loose, repo])).encode()
    from_roots = ask_hook(home, "session-start", cursor, loose)
    assert from_roots is not None and written["id"] in json.loads(from_roots)["additional_context"]
    wandered = json.dumps(session_start(loose, "sess-w")).encode()
    from_dirs = ask_hook(home, "session-start", wandered, loose, project_dirs=(str(repo),))
    assert from_dirs is not None and written["id"] in from_dirs.decode("ascii")

    # Bad requests get an error reply, and the daemon keeps serving.
    for raw in (b"not a frame at all", b"ctxd\x09" + bytes(8), b"ctxd\x01\xff\xff\xff\xff"):
        bad = exchange(home, raw + bytes(16))
        assert bad["ok"] is False, raw
    heads = (b"", b"not json", b"[1, 2]", b'{"kind": "reindex-everything"}', b'{"kind": "hook"}')
    for head in heads:
        bad = exchange(home, frames.encode(head))
        assert bad["ok"] is False and "not a request" in bad["error"], head
    stray = json.dumps({"kind": "ping", "env": {"HOME": "/root"}}).encode()
    assert exchange(home, frames.encode(stray))["ok"] is False  # no field it does not know
    # A hook request the daemon cannot answer is declined: the hook then works in-process.
    assert ask_hook(home, "no-such-event", b"{}", repo) is None
    assert ask_hook(home, "prompt", b"[not, json", repo) is None
    ping = to_daemon.ask(str(home), {"kind": "ping"})
    assert ping is not None and ping[0]["pid"] == pid

    stopped = daemons.contextd("daemon", "stop")
    assert stopped == {"action": "stopped", "pid": pid}
    assert wait_gone(pid, 10)
    assert run.json("daemon", "status") == {"running": False}
    assert not Path(started["socket"]).exists()
    assert not (home / "daemon.pid").exists()
    assert run.json("daemon", "stop") == {"action": "not running"}


def test_a_daemon_killed_mid_flight_leaves_nothing_that_blocks(
    daemons: Daemons, repo: Path, run: Cli, home: Path
) -> None:
    decision = run.json(*DECISION)["id"]
    first = int(daemons.start()["pid"])
    os.kill(first, signal.SIGKILL)
    assert wait_gone(first, 10)
    stale = home / "daemon.sock"
    assert stale.is_socket()  # nobody cleaned up after the crash
    assert run.json("daemon", "status") == {"running": False}
    # The hook finds no daemon behind the stale socket and answers in-process.
    fallback = run_hook("prompt", user_prompt(repo, QUEUE_PROMPT), cwd=repo)
    assert decision in fallback.context
    assert not (home / "hook.log").exists()
    restarted = daemons.start()
    assert restarted["action"] == "started" and restarted["pid"] != first
    assert run.json("daemon", "status")["pid"] == restarted["pid"]


def test_session_start_starts_the_daemon_when_allowed(
    daemons: Daemons, repo: Path, run: Cli, home: Path
) -> None:
    run.json(*DECISION)
    (home / "config.toml").write_text(
        BASE_CONFIG.replace("autostart_daemon = false", "autostart_daemon = true"),
        encoding="utf-8",
    )
    briefed = run_hook("session-start", session_start(repo), cwd=repo)
    assert "Use NATS for the task queue" in briefed.context
    deadline = time.monotonic() + 60
    while daemons.adopt_running() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    pid = daemons.adopt_running()
    assert pid is not None, "session-start did not start the daemon"
    # The next session-start finds it running and does not start another one.
    run_hook("session-start", session_start(repo, "sess-2"), cwd=repo)
    time.sleep(1.0)
    assert daemons.adopt_running() == pid
