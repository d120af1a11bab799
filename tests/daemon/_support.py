"""Starting real daemons in tests, and making sure none outlives its test."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from contextd.wire import frames, rendezvous, to_daemon
from tests.hooks._support import daemon_processes, end_processes, hook_env

__all__ = ["Daemons", "alive", "ask_hook", "exchange", "wait_gone"]


def alive(pid: int) -> bool:
    """Running (a zombie nobody reaped yet counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def wait_gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return not alive(pid)


class Daemons:
    """Starts daemons for one test and makes sure none outlives it."""

    def __init__(self, home: Path, cwd: Path) -> None:
        self.home = home
        self.cwd = cwd
        self.pids: set[int] = set()

    def contextd(self, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-m", "contextd", *args, "--json"],
            capture_output=True,
            text=True,
            encoding="utf-8",
            cwd=self.cwd,
            env=env or hook_env(),
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        reply = json.loads(done.stdout)
        assert isinstance(reply, dict)
        if "pid" in reply:
            self.pids.add(int(reply["pid"]))
        return reply

    def start(self, env: dict[str, str] | None = None) -> dict[str, Any]:
        return self.contextd("daemon", "start", env=env)

    def adopt_running(self) -> int | None:
        reply = to_daemon.ask(str(self.home), {"kind": "ping"})
        if reply is not None:
            pid = int(str(reply[0]["pid"]))
            self.pids.add(pid)
            return pid
        return None

    def shutdown(self) -> None:
        self.adopt_running()
        pid_file = self.home / "daemon.pid"
        if pid_file.exists():
            self.pids.add(int(pid_file.read_text(encoding="utf-8")))
        to_daemon.ask(str(self.home), {"kind": "stop"}, timeout=5.0)
        for pid in self.pids:
            if not wait_gone(pid, 10.0):
                os.kill(pid, signal.SIGKILL)
                wait_gone(pid, 5.0)
        end_processes(daemon_processes(self.home))  # any the test did not hear of


def ask_hook(
    home: Path,
    event: str,
    payload: bytes,
    folder: Path,
    project: str | None = None,
    project_dirs: tuple[str, ...] = (),
) -> bytes | None:
    """A hook request as `contextd hook` sends it; the bytes the daemon says to print."""
    request = {
        "kind": "hook",
        "home": str(home),
        "stamp": to_daemon.code_stamp(),
        "event": event,
        "project": project,
        "folder": str(folder),
        "project_dirs": list(project_dirs),
    }
    reply = to_daemon.ask(str(home), request, payload, timeout=30)
    return reply[1] if reply is not None else None


def exchange(home: Path, data: bytes) -> dict[str, Any]:
    """Send raw bytes to the daemon's socket; its reply frame's head."""
    path = rendezvous.find(str(home))
    assert path is not None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(30)
        conn.connect(path)
        conn.sendall(data)
        head, _ = frames.read(conn)
    decoded = json.loads(head)
    assert isinstance(decoded, dict)
    return decoded
