"""The daemon: one process that keeps the store, the model and the vector matrix warm and
answers newline-delimited JSON requests on a Unix socket, one at a time.

It reads the store through the same App as any command, so writes made by other processes
(the CLI, the MCP server) are seen: the vector matrix reloads when the database changes.
"""

import fcntl
import json
import logging
import os
import signal
import socket
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from contextd.app import App
from contextd.daemon.client import socket_path
from contextd.daemon.forward import Command

__all__ = ["Handler", "already_running", "serve"]

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], dict[str, Any]]
_MAX_REQUEST = 4 * 1024 * 1024
_ACCEPT_TICK_S = 0.5  # how often the loop looks at the stop flag


def already_running(home: Path) -> bool:
    """True when another daemon holds this home's lock."""
    with _lock_file(home) as held:
        return not held


def serve(app: App, handlers: Mapping[str, Handler], *, warm: bool = True) -> None:
    """Run until asked to stop (a `stop` request, SIGTERM or SIGINT)."""
    home = app.settings.home
    with _lock_file(home) as held:
        if not held:
            log.info("a daemon is already running for %s", home)
            return
        if warm:
            app.index.warm()
        started = time.time()
        stopping = False

        def stop(_signum: int = 0, _frame: object = None) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        path = socket_path(str(home))
        pid_file = home / "daemon.pid"
        with _listening(path) as listener:
            pid_file.write_text(str(os.getpid()), encoding="utf-8")
            try:
                while not stopping:
                    try:
                        conn, _ = listener.accept()
                    except TimeoutError:
                        continue
                    except InterruptedError:
                        continue
                    with conn:
                        request = _read_request(conn)
                        reply, stopping_now = _dispatch(request, handlers, started)
                        stopping = stopping or stopping_now
                        raw = request is not None and request.get("raw", False)
                        _send(conn, _raw_reply(reply) if raw else _json_reply(reply))
            finally:
                pid_file.unlink(missing_ok=True)


def _dispatch(
    request: dict[str, Any] | None, handlers: Mapping[str, Handler], started: float
) -> tuple[dict[str, Any], bool]:
    if request is None:
        return {"ok": False, "error": "the request was not one JSON object on one line"}, False
    op = request.get("op")
    if op == "ping":
        return {"ok": True, "pid": os.getpid(), "uptime_s": time.time() - started}, False
    if op == "stop":
        return {"ok": True, "pid": os.getpid()}, True
    handler = handlers.get(str(op))
    if handler is None:
        return {"ok": False, "error": f"unknown op {op!r}"}, False
    try:
        return {"ok": True, **handler(request)}, False
    except Exception as exc:  # one bad request must not take the daemon down
        log.warning("request %r failed", op, exc_info=True)
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}, False


@contextmanager
def _lock_file(home: Path) -> Iterator[bool]:
    home.mkdir(parents=True, exist_ok=True)
    with open(home / "daemon.lock", "a+b") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def _listening(path: str) -> Iterator[socket.socket]:
    # We hold the lock, so a socket file left here belongs to a daemon that died.
    Path(path).unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        old_mask = os.umask(0o177)  # the socket answers with the store's content: owner only
        try:
            listener.bind(path)
        finally:
            os.umask(old_mask)
        listener.listen(16)
        listener.settimeout(_ACCEPT_TICK_S)
        yield listener
    finally:
        listener.close()
        Path(path).unlink(missing_ok=True)


def _read_request(conn: socket.socket) -> dict[str, Any] | None:
    """A JSON request, or a hook's raw one (see contextd.daemon.client) as
    {"op": "hook", "event", "project", "body": bytes, "raw": True}, or a command's as
    {"op": "cli", "command": Command, "raw": True}."""
    conn.settimeout(5.0)
    chunks: list[bytes] = []
    size = 0
    try:
        while size <= _MAX_REQUEST and (chunk := conn.recv(65536)):
            chunks.append(chunk)
            size += len(chunk)
            if size == len(chunk) and chunk.startswith(b"{") and chunk.endswith(b"\n"):
                break  # a whole JSON line from a client that keeps its side open
    except OSError:
        return None
    data = b"".join(chunks)
    command = Command.decode(data)
    if command is not None:
        return {"op": "cli", "command": command, "raw": True}
    if data.startswith(b"HOOK "):
        head, project, body = (data.split(b"\n", 2) + [b"", b""])[:3]
        event = head[5:].decode("utf-8", "replace").strip()
        name = project.decode("utf-8", "replace").strip() or None
        return {"op": "hook", "event": event, "project": name, "body": body, "raw": True}
    try:
        decoded = json.loads(data)
    except ValueError:
        return None
    return decoded if isinstance(decoded, dict) else None


def _json_reply(reply: dict[str, Any]) -> bytes:
    return json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n"


def _raw_reply(reply: dict[str, Any]) -> bytes:
    if not reply.get("ok"):
        return b"ERR " + str(reply.get("error", "")).encode("utf-8", "replace") + b"\n"
    output = reply.get("output", "")
    return b"OK\n" + (output if isinstance(output, bytes) else str(output).encode("utf-8"))


def _send(conn: socket.socket, reply: bytes) -> None:
    try:
        conn.sendall(reply)
    except OSError:
        log.info("the client left before its reply")
