"""Asking the daemon: the standard library only, since the prompt hook imports this on every
prompt and must answer in tens of milliseconds."""

import json
import os
import socket
from collections.abc import Mapping

__all__ = ["home_dir", "request", "socket_path"]

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


def request(
    home: str, message: Mapping[str, object], timeout: float = TIMEOUT_S
) -> dict[str, object] | None:
    """Send one request; the reply, or None when no daemon answered in time."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(socket_path(home))
            conn.sendall(json.dumps(message).encode("utf-8") + b"\n")
            reply = _read_line(conn)
    except (OSError, ValueError):
        return None
    if reply is None:
        return None
    try:
        decoded = json.loads(reply)
    except ValueError:
        return None
    return decoded if isinstance(decoded, dict) else None


def _read_line(conn: socket.socket) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            return None  # closed before a whole reply
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n"):
            return b"".join(chunks)
        if size > _MAX_REPLY:
            return None
