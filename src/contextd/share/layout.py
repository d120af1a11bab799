"""Where a checkout keeps its shared records (`.contextd/records/`), and whether that place is
safe to use. The standard library only: every command asks, and most projects are not shared.

A teammate's commit may hold anything, symbolic links too: the folders must be real folders
inside the repository, so no read, write or deletion follows a link out of it.
"""

import errno
import hashlib
import os
import stat
from pathlib import Path

__all__ = [
    "FOLDER",
    "RECORDS",
    "digest_of",
    "folder_problem",
    "read_file",
    "records_folder",
    "shared_checkout",
]

FOLDER = ".contextd"
RECORDS = "records"
MAX_FILE = 256 * 1024  # bytes of one record file


def records_folder(checkout: str | Path) -> Path:
    return Path(checkout) / FOLDER / RECORDS


def shared_checkout(checkout: str | Path | None) -> bool:
    """Whether a checkout holds shared memory: a `.contextd` folder (its README keeps it in
    git when a branch holds no record, and git drops the empty `records/` folder), or a link
    in its place, which `folder_problem` names."""
    if checkout is None:
        return False
    try:
        mode = os.lstat(Path(checkout) / FOLDER).st_mode
    except OSError:
        return False
    return stat.S_ISDIR(mode) or stat.S_ISLNK(mode)


def folder_problem(checkout: str | Path) -> str | None:
    """Why the checkout's shared folders must not be used, or None when they are real folders
    (or not there yet)."""
    for path in (Path(checkout) / FOLDER, records_folder(checkout)):
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"{path} cannot be read ({exc.strerror})"
        if stat.S_ISLNK(mode):
            return (
                f"{path} is a symbolic link; contextd reads and writes shared records only in a "
                "real folder inside the repository: replace the link with a folder"
            )
        if not stat.S_ISDIR(mode):
            return f"{path} is not a folder; remove it, or move it aside, and run `contextd share`"
    return None


def read_file(path: Path) -> tuple[bytes, tuple[int, int], str | None]:
    """A record file's bytes and (size, mtime), or the problem that keeps it out: it is not a
    regular file (a link, a device, a pipe), is larger than MAX_FILE, or cannot be read."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return b"", (0, 0), "it is a symbolic link, not a record file"
        return b"", (0, 0), f"it cannot be read ({exc.strerror})"
    with os.fdopen(handle, "rb") as file:
        info = os.fstat(file.fileno())
        stamp = (info.st_size, info.st_mtime_ns)
        if not stat.S_ISREG(info.st_mode):
            return b"", stamp, "it is not a regular file"
        data = file.read(MAX_FILE + 1)
    if len(data) > MAX_FILE:
        return b"", stamp, f"it is over {MAX_FILE // 1024} KB"
    return data, stamp, None


def digest_of(data: bytes) -> str:
    """The hash a record file is known by."""
    return hashlib.sha256(data).hexdigest()
