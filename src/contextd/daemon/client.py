"""Asking the daemon: the standard library only, since the prompt hook imports this on every
prompt and must answer in tens of milliseconds.

Three request forms share the socket: a JSON object on one line (ping, stop: for the CLI),
the hooks' raw form: `HOOK <event>` and the project name (or nothing) on two lines, then the
agent's payload untouched, answered by `OK` on a line and the bytes to print; and a command's
raw form for `search` and `recall` (contextd.daemon.forward), answered the same way. The raw form
spares the hook importing json and socket (about 30 ms of a 60 ms budget); `_socket` is
their C core.
"""

import _socket
import os
from collections.abc import Mapping

__all__ = ["ask_hook", "ask_raw", "home_dir", "request", "socket_path"]

TIMEOUT_S = 1.0  # a daemon that takes longer is busy or wedged: answer in-process instead
_MAX_REPLY = 8 * 1024 * 1024
_MAX_SOCKET_PATH = 100  # sun_path holds 104-108 bytes, depending on the platform


def home_dir() -> str:
    """$CONTEXTD_HOME, else ~/.contextd (as contextd.config.resolve_home)."""
    chosen = os.environ.get("CONTEXTD_HOME") or os.path.join(os.path.expanduser("~"), ".contextd")
    return os.path.abspath(os.path.expanduser(chosen))


def socket_path(home: str) -> str:
    """The daemon's socket in the home, or in the temp folder when that path is too long."""
    path = os.path.join(home, "daemon.sock")
    if len(os.fsencode(path)) <= _MAX_SOCKET_PATH:
        return path
    import hashlib  # rarely needed: kept off the prompt hook's start-up

    digest = hashlib.sha256(os.fsencode(home)).hexdigest()[:16]
    return os.path.join("/tmp", f"contextd-{os.getuid()}-{digest}.sock")


def ask_hook(home: str, event: str, project: str, payload: bytes) -> bytes | None:
    """The bytes the daemon says the hook should print, or None when no daemon answered."""
    header = f"HOOK {event}\n{project}\n".encode()
    reply = _exchange(home, header + payload, TIMEOUT_S)
    if reply is None or not reply.startswith(b"OK\n"):
        return None
    return reply[3:]


def request(
    home: str, message: Mapping[str, object], timeout: float = TIMEOUT_S
) -> dict[str, object] | None:
    """Send one JSON request; the reply, or None when no daemon answered in time."""
    import json

    reply = _exchange(home, json.dumps(message).encode("utf-8") + b"\n", timeout)
    if reply is None:
        return None
    try:
        decoded = json.loads(reply)
    except ValueError:
        return None
    return decoded if isinstance(decoded, dict) else None


def ask_raw(home: str, message: bytes, timeout: float) -> bytes | None:
    """Send one request of a raw form (see contextd.daemon.forward); the bytes the daemon
    answered with, or None when none answered in time or it refused."""
    reply = _exchange(home, message, timeout)
    if reply is None or not reply.startswith(b"OK\n"):
        return None
    return reply[3:]


def _exchange(home: str, message: bytes, timeout: float) -> bytes | None:
    """Send `message`, close our side, and read the whole reply."""
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(timeout)
        conn.connect(socket_path(home))
        conn.sendall(message)
        conn.shutdown(_socket.SHUT_WR)
        chunks: list[bytes] = []
        size = 0
        while chunk := conn.recv(65536):
            chunks.append(chunk)
            size += len(chunk)
            if size > _MAX_REPLY:
                return None
    except OSError:
        return None
    finally:
        conn.close()
    return b"".join(chunks) or None
