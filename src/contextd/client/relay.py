"""`contextd mcp serve` as a relay to a running daemon, which hosts the MCP session with the
SDK imported once and the store and model warm: this process only copies lines between its
stdio and the daemon's socket. The standard library only: importing the SDK is what it saves.

The request names what the in-process server would have read from this process (the home,
--project or $CONTEXTD_PROJECT, this folder, the agent's project folders, --read-only) and
nothing else of its environment. When no daemon hosts the session (none runs, another code
stamp, it declines, CONTEXTD_DEBUG) nothing has been read or written, and the caller runs the
in-process server instead.

When the daemon's side ends while the agent still talks (`contextd daemon stop`, a changed
config.toml, an upgrade, a crash), the agent's server must not die with it: the relay connects
to a daemon if one hosts it right away, else starts the in-process server as a child. It
replays the `initialize` request and the `notifications/initialized` it forwarded, drops the
answer to the replayed `initialize` (the client has had one) and goes on relaying. A request
that was in flight at that moment is sent again when it changes nothing (a listing, or a call
of a tool the server's `tools/list` marked read-only); any other, a write that may or may not
have been stored, is answered with an error saying so. While a child serves, the relay looks
for a daemon whenever the session has been idle a few seconds, and hands the session back to
it (the same replay), so the child's own model and store do not stay loaded for the rest of
the agent's session.
"""

import _socket
import contextlib
import json
import os
import select
import sys
import time
from typing import Any, NamedTuple

from contextd.agent_dirs import project_dirs
from contextd.client.options import Option, parse
from contextd.home_folder import resolve_home
from contextd.wire import to_daemon
from contextd.wire.rendezvous import Unsafe

__all__ = ["IN_PROCESS", "SERVE_OPTIONS", "serve"]

# Set for the in-process server a relay starts as its fallback (and honoured by any
# `contextd mcp serve`): serve in this process, never through a daemon.
IN_PROCESS = "CONTEXTD_MCP_IN_PROCESS"
SERVE_OPTIONS = (
    Option("--read-only", "read_only", "Expose only the tools that change nothing.", kind="flag"),
)
_TABLE = {"mcp serve": SERVE_OPTIONS}
_ASK_TIMEOUT_S = 2.0  # the daemon says yes or no at once; a busy one is not waited for
_DRAIN_S = 5.0  # after the client closed stdin: how long the server may take to finish
_RECONNECT_AFTER_S = 10.0  # a daemon that dropped us sooner than this is not asked again
_RETURN_AFTER_S = 5.0  # idle this long on a child: ask whether a daemon hosts us again
_CHUNK = 1 << 16
_NONE = object()
# Requests that change nothing, whatever their arguments (tools/call depends on the tool).
_SAFE_METHODS = frozenset(
    {
        "ping",
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "completion/complete",
    }
)
LOST = (
    "contextd's daemon stopped while this call was in flight, and a call that may change "
    "memory is not sent twice: it may or may not have been stored, so search for it first, "
    "then call again if it is missing. The server carries on."
)


def serve(argv: list[str]) -> int | None:
    """Relay `contextd ARGV` (an `mcp serve`) to the daemon: the exit code; None when no
    daemon hosts it (nothing was read or written: the caller serves in-process)."""
    if os.environ.get("CONTEXTD_DEBUG") or os.environ.get(IN_PROCESS):
        return None
    parsed = parse(argv, _TABLE, arguments=0)
    if parsed is None:
        return None  # help, or anything click should answer
    try:
        folder = os.getcwd()
    except OSError:
        return None
    values = parsed.values
    request = {
        "kind": "mcp",
        "home": resolve_home(str(values["home"]) if values["home"] else None),
        "stamp": to_daemon.code_stamp(),
        "project": values["project"] or os.environ.get("CONTEXTD_PROJECT") or None,
        "folder": folder,
        "project_dirs": project_dirs(os.environ),
        "read_only": bool(values["read_only"]),
    }
    daemon = _hosted(request)
    if daemon is None:
        return None
    return Relay(request, argv, daemon).run()


def _hosted(request: dict[str, Any], *, say_unsafe: bool = True) -> "_Daemon | None":
    try:
        conn = to_daemon.open_session(str(request["home"]), request, _ASK_TIMEOUT_S)
    except Unsafe as exc:
        if say_unsafe:
            sys.stderr.write(f"contextd: {exc} Serving without the daemon.\n")
        return None
    return _Daemon(conn) if conn is not None else None


class _Daemon:
    """The daemon's end: a connected, checked socket."""

    def __init__(self, conn: _socket.socket) -> None:
        self._conn = conn
        self.fd = conn.fileno()

    def send(self, data: bytes) -> bool:
        try:
            self._conn.sendall(data)
        except OSError:
            return False
        return True

    def recv(self) -> bytes:
        try:
            return self._conn.recv(_CHUNK)
        except OSError:
            return b""

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            self._conn.shutdown(_socket.SHUT_WR)

    def close(self) -> None:
        self._conn.close()


class _Child:
    """The in-process server, run as a child with pipes."""

    def __init__(self, argv: list[str]) -> None:
        import subprocess  # only once the daemon is gone

        environment = {**os.environ, IN_PROCESS: "1"}
        self._process = subprocess.Popen(
            [sys.executable, "-m", "contextd", *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=environment,
            bufsize=0,
        )
        assert self._process.stdin is not None and self._process.stdout is not None
        self._stdin = self._process.stdin
        self.fd = self._process.stdout.fileno()

    def send(self, data: bytes) -> bool:
        try:
            _write_all(self._stdin.fileno(), data)
        except (OSError, ValueError):
            return False
        return True

    def recv(self) -> bytes:
        try:
            return os.read(self.fd, _CHUNK)
        except OSError:
            return b""

    def finish(self) -> None:
        self._stdin.close()

    def close(self) -> None:
        import subprocess

        self._stdin.close()
        try:
            self._process.wait(_DRAIN_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        assert self._process.stdout is not None
        self._process.stdout.close()


class _Pending(NamedTuple):
    """A request of the client's, not answered yet."""

    ident: object
    method: str
    tool: object  # tools/call: the tool's name
    line: bytes


class Relay:
    """Copies whole lines between stdio and the server's end, noting just enough of them (the
    handshake, which requests await an answer) to carry on with another server."""

    def __init__(self, request: dict[str, Any], argv: list[str], upstream: _Daemon) -> None:
        self._request = request
        self._argv = argv
        self._up: _Daemon | _Child = upstream
        self._connected = time.monotonic()
        self._from_client = b""  # the start of a line the client has not finished
        self._from_server = b""
        self._handshake: list[bytes] = []  # `initialize`, then `notifications/initialized`
        self._initialize_id: object = _NONE
        self._waiting: dict[object, _Pending] = {}  # the client's requests not answered yet
        self._drop: object = _NONE  # the replayed initialize's id: the client had its answer
        self._read_only_tools: set[str] = set()  # as the server's tools/list marked them

    def run(self) -> int:
        """Relay until the client and the server are done; the exit code. Never raises."""
        try:
            return self._pump()
        except (BrokenPipeError, ConnectionResetError):
            return 0  # the client went away
        except KeyboardInterrupt:
            return 130
        except Exception as exc:  # never a traceback to the agent
            sys.stderr.write(f"contextd mcp serve: the relay failed ({type(exc).__name__}).\n")
            return 1
        finally:
            self._up.close()

    def _pump(self) -> int:
        stdin_open = True
        deadline: float | None = None
        while True:
            up = self._up
            watch = [up.fd, 0] if stdin_open else [up.fd]
            if deadline is not None:
                wait: float | None = max(0.0, deadline - time.monotonic())
            else:
                wait = _RETURN_AFTER_S if isinstance(up, _Child) else None
            ready, _, _ = select.select(watch, [], [], wait)
            if not ready and deadline is not None:
                return 0  # the server did not end within _DRAIN_S of the client
            if not ready:
                self._back_to_daemon()
                continue
            if stdin_open and 0 in ready:
                data = os.read(0, _CHUNK)
                if data:
                    self._from_client_bytes(data)
                else:
                    stdin_open, deadline = False, time.monotonic() + _DRAIN_S
                    if self._from_client:
                        self._send_up(self._from_client)
                    self._up.finish()
            if up is self._up and up.fd in ready:
                data = up.recv()
                if data:
                    self._from_server_bytes(data)
                elif not stdin_open:
                    return 0
                elif not self._take_over():
                    return 1

    def _from_client_bytes(self, data: bytes) -> None:
        *lines, self._from_client = (self._from_client + data).split(b"\n")
        if not lines:
            return
        for line in lines:
            self._note(line)
        self._send_up(b"\n".join(lines) + b"\n")

    def _note(self, line: bytes) -> None:
        message = _decoded(line)
        if message is None:
            return
        method = message.get("method")
        if method == "initialize":
            self._handshake, self._initialize_id = [line], message.get("id")
        elif method == "notifications/initialized" and len(self._handshake) == 1:
            self._handshake.append(line)
        if isinstance(method, str) and "id" in message:
            params = message.get("params")
            tool = params.get("name") if isinstance(params, dict) else None
            self._waiting[_key(message["id"])] = _Pending(message["id"], method, tool, line)

    def _send_up(self, data: bytes) -> None:
        if not self._up.send(data):
            self._up.finish()  # the server's end is gone: its reading side ends too

    def _from_server_bytes(self, data: bytes) -> None:
        *lines, self._from_server = (self._from_server + data).split(b"\n")
        kept = [line for line in lines if self._passes(line)]
        if kept:
            _write_all(1, b"\n".join(kept) + b"\n")

    def _passes(self, line: bytes) -> bool:
        """Note an answer; False for the answer to a replayed `initialize`."""
        if not self._waiting and self._drop is _NONE:
            return True
        message = _decoded(line)
        if message is None or "method" in message or "id" not in message:
            return True
        key = _key(message["id"])
        if self._drop is not _NONE and key == self._drop:
            self._drop = _NONE
            return False
        pending = self._waiting.pop(key, None)
        if pending is not None and pending.method == "tools/list":
            self._read_only_tools.update(_read_only(message))
        return True

    def _safe(self, pending: _Pending) -> bool:
        """Whether sending `pending` again cannot change anything twice."""
        if pending.method == "tools/call":
            return pending.tool in self._read_only_tools
        return pending.method in _SAFE_METHODS

    def _take_over(self) -> bool:
        """Carry on with another server after this one's end; False when none can."""
        was_daemon = isinstance(self._up, _Daemon)
        self._up.close()
        self._from_server = b""  # a line cut off by the end is not delivered
        replayed = _key(self._initialize_id) if self._handshake else _NONE
        waiting, self._waiting = self._waiting, {}
        again = {key: p for key, p in waiting.items() if key != replayed and self._safe(p)}
        lost = [p.ident for key, p in waiting.items() if key != replayed and key not in again]
        if lost:
            _write_all(1, b"".join(_lost(ident) for ident in lost))
        successor = self._successor(was_daemon)
        if successor is None:
            if again:
                _write_all(1, b"".join(_lost(p.ident) for p in again.values()))
            return False
        self._up = successor
        lines = []
        if replayed is not _NONE:
            if replayed in waiting:  # not answered yet: the new server's answer is the one
                self._waiting[replayed] = waiting[replayed]
            else:
                self._drop = replayed
            lines = list(self._handshake)
        self._waiting.update(again)
        lines += [pending.line for pending in again.values()]
        return not lines or successor.send(b"".join(line + b"\n" for line in lines))

    def _back_to_daemon(self) -> None:
        """From the child to a daemon that hosts the session again, when nothing is in
        flight either way and the handshake is complete (it is replayed to the daemon)."""
        if self._waiting or self._from_client or self._from_server or len(self._handshake) < 2:
            return
        daemon = _hosted(self._request, say_unsafe=False)  # asked every few seconds
        if daemon is None:
            return
        if not daemon.send(b"".join(line + b"\n" for line in self._handshake)):
            daemon.close()
            return
        self._drop = _key(self._initialize_id)
        child, self._up = self._up, daemon
        self._connected = time.monotonic()
        child.close()

    def _successor(self, was_daemon: bool) -> "_Daemon | _Child | None":
        if not was_daemon:
            sys.stderr.write("contextd mcp serve: the server stopped.\n")
            return None
        if time.monotonic() - self._connected > _RECONNECT_AFTER_S:
            daemon = _hosted(self._request)
            if daemon is not None:
                self._connected = time.monotonic()
                return daemon
        try:
            return _Child(self._argv)
        except OSError as exc:
            sys.stderr.write(f"contextd mcp serve: cannot start a server ({exc.strerror}).\n")
            return None


def _decoded(line: bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


def _read_only(answer: dict[str, Any]) -> list[str]:
    """The tools a tools/list answer marks read-only."""
    result = answer.get("result")
    tools = result.get("tools") if isinstance(result, dict) else None
    if not isinstance(tools, list):
        return []
    return [
        tool["name"]
        for tool in tools
        if isinstance(tool, dict)
        and isinstance(tool.get("name"), str)
        and isinstance(tool.get("annotations"), dict)
        and tool["annotations"].get("readOnlyHint") is True
    ]


def _key(ident: object) -> object:
    """A request id as a dict key: 1 and "1" are two ids."""
    return (type(ident).__name__, ident) if isinstance(ident, int | str) else repr(ident)


def _lost(ident: object) -> bytes:
    error = {"code": -32603, "message": LOST}
    return json.dumps({"jsonrpc": "2.0", "id": ident, "error": error}).encode("utf-8") + b"\n"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
