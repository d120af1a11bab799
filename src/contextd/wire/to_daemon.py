"""Asking the daemon one question: find its socket, check it is this user's, send one frame,
read one frame. Anything short of a good answer (no daemon, a stale socket, a refusal, a
timeout) is None, and the caller does the work itself; something that is not this user's
raises Unsafe, so the caller can say so."""

import _socket
import json
import os
from collections.abc import Mapping

from contextd.wire import frames, rendezvous

__all__ = [
    "COMMAND_TIMEOUT_S",
    "HOOK_TIMEOUT_S",
    "Unanswered",
    "ask",
    "code_stamp",
    "open_session",
]

HOOK_TIMEOUT_S = 1.0  # a daemon that takes longer is busy or wedged: answer in-process
COMMAND_TIMEOUT_S = 5.0  # a reload of a large matrix after many writes can take a second or two


class Unanswered(Exception):
    """A request that changes something reached the daemon, but no answer came back: whether
    it was carried out is unknown, so it must not simply be done again."""


def ask(
    home: str,
    request: Mapping[str, object],
    body: bytes = b"",
    timeout: float = COMMAND_TIMEOUT_S,
    *,
    repeatable: bool = True,
) -> tuple[dict[str, object], bytes] | None:
    """The daemon's answer to `request` (its head, decoded, and its body); None when no daemon
    gave one. A request that is not `repeatable` (a write) raises Unanswered instead of
    returning None once it was sent.

    Raises:
        rendezvous.Unsafe: the socket, its folder or the process behind it is not this user's.
        Unanswered: a write was sent and no answer came.
    """
    conn = _connected(home, timeout)
    if conn is None:
        return None
    sent = False
    try:
        conn.sendall(frames.encode(json.dumps(request).encode("ascii"), body))
        sent = True
        head, answer = frames.read(conn)
        decoded = json.loads(head)
    except (OSError, ValueError, frames.BadFrame):
        if not repeatable and sent:
            raise Unanswered() from None
        return None
    finally:
        conn.close()
    if not isinstance(decoded, dict) or decoded.get("ok") is not True:
        _replace_if_outdated(home, decoded)
        return None
    return decoded, answer


def open_session(
    home: str, request: Mapping[str, object], timeout: float = COMMAND_TIMEOUT_S
) -> "_socket.socket | None":
    """The connection to the daemon once it said yes to `request` (a session: what follows
    on the connection is the caller's protocol), blocking, with no timeout; None when no
    daemon said yes.

    Raises:
        rendezvous.Unsafe: the socket, its folder or the process behind it is not this user's.
    """
    conn = _connected(home, timeout)
    if conn is None:
        return None
    try:
        conn.sendall(frames.encode(json.dumps(request).encode("ascii")))
        head, _body = frames.read(conn)  # reads the frame's bytes and not one more
        decoded = json.loads(head)
        if isinstance(decoded, dict) and decoded.get("ok") is True:
            conn.settimeout(None)
            return conn
        _replace_if_outdated(home, decoded)
    except (OSError, ValueError, frames.BadFrame):
        pass
    except BaseException:
        conn.close()
        raise
    conn.close()
    return None


def _replace_if_outdated(home: str, refusal: object) -> None:
    """A daemon that declined for running other contextd code (started before an upgrade) is
    asked to stop, and one of this code started in its place, so the next hook and command
    are answered warm again instead of cold for the rest of the day."""
    if not isinstance(refusal, dict) or refusal.get("outdated") is not True:
        return
    from contextlib import suppress  # (and pathlib, subprocess) only on this rare path
    from pathlib import Path

    from contextd.wire.launch import start_detached

    ask(home, {"kind": "stop"}, timeout=HOOK_TIMEOUT_S)
    with suppress(OSError):  # a home that cannot hold the daemon's log: answered cold
        start_detached(Path(home))


def _connected(home: str, timeout: float) -> "_socket.socket | None":
    """A connection to the daemon of `home`, its peer checked; None when none listens (no
    socket, or one left by a daemon that died).

    Raises:
        rendezvous.Unsafe: the socket, its folder or the process behind it is not this user's.
    """
    path = rendezvous.find(home)
    if path is None:
        return None
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(timeout)
        conn.connect(path)
    except OSError:
        conn.close()
        return None
    try:
        rendezvous.check_peer(conn, "daemon")
    except rendezvous.Unsafe:
        conn.close()
        raise
    except (OSError, ValueError):
        conn.close()
        return None
    return conn


def code_stamp(root: str | None = None) -> str:
    """Which contextd code this is (the package at `root`, by default this one): its folder
    and the count, newest change time and total size of its sources (what Python checks to
    trust a .pyc). A daemon started before an upgrade or an edit has another stamp, and
    declines a newer client's requests."""
    root = root or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    count = newest = size = 0
    folders = [root]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.name.endswith(".py"):
                    info = entry.stat()
                    count, size = count + 1, size + info.st_size
                    newest = max(newest, info.st_mtime_ns)
                elif entry.name != "__pycache__" and entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
    return f"{root}:{count}:{newest}:{size}"
