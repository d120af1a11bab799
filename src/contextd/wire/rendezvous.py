"""Where a home's daemon listens, and the checks that it is this user's own.

The daemon puts its socket in a folder only its user can enter (mode 0700): a `contextd`
folder in $XDG_RUNTIME_DIR when that is set and private, else the home itself, else, when that
path is too long for a socket, a folder with an unguessable name made in the temp folder. It
writes where in `<home>/daemon.socket`. A client reads that record and, before connecting,
checks that the home, the record, the folder and the socket belong to it and that no one
else can write to them; once connected, both ends check the peer's uid (SO_PEERCRED on Linux,
LOCAL_PEERCRED on macOS and the BSDs). Elsewhere the peer cannot be checked, and clients do
not use a daemon at all.
"""

import os
import stat
import sys

from contextd.home_folder import PRIVATE_FOLDER, open_private, owned_and_closed

__all__ = [
    "RECORD",
    "Spot",
    "Unsafe",
    "check_peer",
    "claim",
    "find",
    "peer_uid",
    "publish",
    "withdraw",
]

RECORD = "daemon.socket"  # in the home: the path of the socket its daemon listens on
SOCKET_NAME = "daemon.sock"
MAX_SOCKET_PATH = 100  # sun_path holds 104-108 bytes, depending on the platform
_MAX_RECORD = 4096
_OTHERS = 0o077


class Unsafe(Exception):
    """Something where the daemon meets its clients is not this user's alone; the message
    says what, in one sentence, and what to do."""


class Spot:
    """Where a daemon listens: the socket's path, and whether its folder is a temporary one
    the daemon made (and removes when it stops)."""

    __slots__ = ("path", "temporary")

    def __init__(self, path: str, temporary: bool) -> None:
        self.path = path
        self.temporary = temporary


# --- the client's side -------------------------------------------------------------------


def find(home: str) -> str | None:
    """The socket the home's daemon recorded, once checked; None when no daemon recorded one,
    its socket is gone, or the home is another user's (no daemon of this user's serves it).

    Raises:
        Unsafe: the home could be changed by another user, or the record, the folder or the
            socket could be another user's.
    """
    try:
        home_info = os.stat(home)
    except OSError:
        return None
    if home_info.st_uid != os.getuid():
        return None  # never this user's daemon; contextd refuses such a home in one sentence
    if not owned_and_closed(home_info):
        raise Unsafe(
            f"{home} can be changed by another user, so its daemon record cannot be trusted; "
            "make it yours with mode 0700 (any contextd command does so for its own home)."
        )
    path = _read_record(os.path.join(home, RECORD))
    if path is None:
        return None
    check_folder(os.path.dirname(path))
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
        raise Unsafe(_foreign(path, info, "socket"))
    return path


def _read_record(record: str) -> str | None:
    try:
        handle = os.open(record, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Unsafe(f"{record} cannot be read safely ({exc.strerror}); remove it.") from None
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode) or not owned_and_closed(info):
            raise Unsafe(_foreign(record, info, "file"))
        data = os.read(handle, _MAX_RECORD)
    finally:
        os.close(handle)
    path = os.fsdecode(data).strip()
    if not os.path.isabs(path) or "\n" in path:
        raise Unsafe(f"{record} does not name a socket; remove it.")
    return path


def check_folder(folder: str) -> None:
    """The socket's folder must be this user's own, with no access for anyone else.

    Raises:
        Unsafe: it is not.
    """
    try:
        info = os.lstat(folder)
    except OSError as exc:
        raise Unsafe(f"The daemon folder {folder} cannot be checked ({exc.strerror}).") from None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & _OTHERS:
        raise Unsafe(_foreign(folder, info, "folder"))


def peer_uid(conn: object) -> int | None:
    """The uid of the process at the other end of a connected Unix socket; None where the
    platform cannot tell."""
    getsockopt = conn.getsockopt  # type: ignore[attr-defined]
    if sys.platform.startswith("linux"):
        import _socket

        creds = getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)  # pid, uid, gid
    elif sys.platform == "darwin" or "bsd" in sys.platform:
        creds = getsockopt(0, 0x001, 76)  # SOL_LOCAL, LOCAL_PEERCRED: xucred {version, uid, …}
    else:
        return None
    return int.from_bytes(creds[4:8], sys.byteorder)


def check_peer(conn: object, what: str) -> None:
    """The process at the other end (`what`: "daemon" or "client") must be this user's.

    Raises:
        Unsafe: it is another user's, or the platform cannot tell.
    """
    uid = peer_uid(conn)
    if uid is None:
        raise Unsafe(f"This platform cannot tell who runs the {what}, so contextd does not use it.")
    if uid != os.getuid():
        raise Unsafe(
            f"The {what} on this socket runs as uid {uid}, not as you (uid {os.getuid()}); "
            "contextd refuses to talk to it."
        )


def _foreign(path: str, info: os.stat_result, what: str) -> str:
    mode = stat.S_IMODE(info.st_mode)
    return (
        f"The daemon {what} {path} belongs to uid {info.st_uid} with mode {mode:o}, not to you "
        f"(uid {os.getuid()}) alone; contextd will not use it. Remove it, or check who made it."
    )


# --- the daemon's side -------------------------------------------------------------------


def claim(home: str, runtime_dir: str | None) -> Spot:
    """Choose where the daemon of `home` listens and make its folder ready; a socket file
    left there by a daemon of this user that died is removed (the caller holds the lock).

    Raises:
        Unsafe: the folder or a file in the way is another user's, or not private.
    """
    folder = _runtime_folder(runtime_dir)
    if folder is not None:
        info = os.stat(home)
        path = os.path.join(folder, f"{info.st_dev:x}-{info.st_ino:x}.sock")
    else:
        path = os.path.join(home, SOCKET_NAME)
    temporary = len(os.fsencode(path)) > MAX_SOCKET_PATH
    if temporary:
        import tempfile

        path = os.path.join(tempfile.mkdtemp(prefix="contextd-"), SOCKET_NAME)
    check_folder(os.path.dirname(path))
    _clear_stale(path)
    return Spot(path, temporary)


def _runtime_folder(runtime_dir: str | None) -> str | None:
    """$XDG_RUNTIME_DIR/contextd, made private, when $XDG_RUNTIME_DIR is a private folder of
    this user; None otherwise (the home is used then)."""
    if not runtime_dir or not os.path.isabs(runtime_dir):
        return None
    try:
        info = os.stat(runtime_dir)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & _OTHERS:
        return None  # not what the XDG spec promises: the home is the safer place
    folder = os.path.join(runtime_dir, "contextd")
    os.makedirs(folder, PRIVATE_FOLDER, exist_ok=True)  # checked by the caller
    return folder


def _clear_stale(path: str) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if info.st_uid != os.getuid() or not stat.S_ISSOCK(info.st_mode):
        raise Unsafe(_foreign(path, info, "socket"))
    os.unlink(path)


def publish(home: str, spot: Spot) -> None:
    """Write where the daemon listens into the home, in one step, readable by its user only."""
    record = os.path.join(home, RECORD)
    scratch = f"{record}.{os.getpid()}"
    handle = open_private(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        os.write(handle, os.fsencode(spot.path) + b"\n")
    finally:
        os.close(handle)
    os.replace(scratch, record)


def withdraw(home: str, spot: Spot, bound: os.stat_result | None) -> None:
    """Remove the record (when it still names this spot), the socket (when it is still the
    one this daemon bound) and a temporary folder."""
    record = os.path.join(home, RECORD)
    try:
        if _read_record(record) == spot.path:
            os.unlink(record)
    except (OSError, Unsafe):
        pass
    try:
        info = os.lstat(spot.path)
        if bound is not None and (info.st_dev, info.st_ino) == (bound.st_dev, bound.st_ino):
            os.unlink(spot.path)
    except OSError:
        pass
    if spot.temporary:
        try:
            os.rmdir(os.path.dirname(spot.path))
        except OSError:
            return  # not empty: someone else's file is not ours to remove
