"""`contextd daemon start|status|stop|run` as real processes, and the hooks it answers."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from contextd.daemon import client
from tests.conftest import DECISION, POSTGRES, Cli
from tests.daemon._support import Daemons, alive, wait_gone
from tests.hooks._support import (
    BASE_CONFIG,
    hook_env,
    run_hook,
    session_start,
    user_prompt,
)

QUEUE_PROMPT = "Why did we pick NATS for the task queue after the deploy issues?"


def _raw_exchange(home: Path, data: bytes) -> dict[str, Any]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(10)
        conn.connect(client.socket_path(str(home)))
        conn.sendall(data)
        conn.shutdown(socket.SHUT_WR)
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = conn.recv(65536)
            if not chunk:
                break
            reply += chunk
    decoded = json.loads(reply)
    assert isinstance(decoded, dict)
    return decoded


def _hook_via_entry(repo: Path, payload: dict[str, Any]) -> tuple[str, list[str]]:
    """Run the hook entry in a fresh interpreter; its stdout and the modules it imported."""
    script = (
        "import json, sys\n"
        "before = set(sys.modules)\n"
        "from contextd.hooks.entry import run_hook\n"
        "code = run_hook(['prompt'])\n"
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
    assert started["socket"] == client.socket_path(str(home))
    assert Path(started["socket"]).exists()

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
    answer = client.ask_hook(
        str(home), "prompt", "", json.dumps(user_prompt(repo, POSTGRES[3], "sess-d2")).encode()
    )
    assert answer is not None and written["id"] in answer.decode("ascii")
    # $CONTEXTD_PROJECT travels with the request: the briefing of orbit, asked from elsewhere.
    loose = tmp_path / "loose"
    loose.mkdir()
    briefing = client.ask_hook(
        str(home), "session-start", "orbit", json.dumps(session_start(loose)).encode()
    )
    assert briefing is not None and written["id"] in briefing.decode("ascii")

    # Bad requests get an error reply, and the daemon keeps serving.
    for raw in (b"not json at all\n", b"[1, 2, 3]\n", b"\n", b'{"op": "hook", "event"'):
        bad = _raw_exchange(home, raw)
        assert bad["ok"] is False and "one JSON object" in bad["error"], raw
    unknown = client.request(str(home), {"op": "reindex-everything"})
    assert unknown == {"ok": False, "error": "unknown op 'reindex-everything'"}
    # A hook request the daemon cannot answer is refused (ERR): the hook then works in-process.
    assert client.ask_hook(str(home), "no-such-event", "", b"{}") is None
    assert client.ask_hook(str(home), "prompt", "", b"[not, json") is None
    ping = client.request(str(home), {"op": "ping"})
    assert ping is not None and ping["ok"] is True and ping["pid"] == pid

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
    stale = Path(client.socket_path(str(home)))
    assert stale.exists()  # nobody cleaned up after the crash
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
