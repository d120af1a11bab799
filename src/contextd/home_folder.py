"""The home folder: where it is, and keeping it the owner's alone.

The standard library only: the hook and the daemon client use it on every prompt. The home
holds what teams treat as sensitive, so it is 0700 and every file in it 0600, whatever the
umask: set on what contextd creates, when it creates it. contextd never walks a folder to change
it, and a folder that holds other things (a user's home, `/`, a checkout) is refused as a home.
"""

import os
import stat

__all__ = [
    "PRIVATE_FILE",
    "PRIVATE_FOLDER",
    "make_folders",
    "make_private",
    "open_private",
    "owned_and_closed",
    "resolve_home",
    "unusable",
]

PRIVATE_FOLDER = 0o700
PRIVATE_FILE = 0o600
_OTHERS = 0o077  # any permission for the group or anyone else
# What contextd writes first in a home: a folder holding one of these is a contextd home.
_HOME_MARKS = ("contextd.db", "config.toml", "hook.log")


def resolve_home(chosen: str | os.PathLike[str] | None = None) -> str:
    """The absolute home: `chosen`, else $CONTEXTD_HOME, else ~/.contextd."""
    picked = os.fspath(chosen) if chosen else os.environ.get("CONTEXTD_HOME")
    picked = picked or os.path.join(os.path.expanduser("~"), ".contextd")
    return os.path.abspath(os.path.expanduser(picked))


def unusable(home: str | os.PathLike[str]) -> str | None:
    """One sentence when `home` cannot be this user's home: another user's folder, one behind
    a folder closed to this user, or one whose permissions shut this user out; None when it
    is usable (or does not exist yet)."""
    home = os.fspath(home)
    advice = "give a home of your own with --home or $CONTEXTD_HOME (default ~/.contextd)"
    try:
        info = os.stat(home)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except PermissionError:
        return f"Cannot reach {home}: a folder on its path is closed to you; {advice}."
    if info.st_uid != os.getuid():
        return (
            f"{home} belongs to another user (uid {info.st_uid}), not to you (uid "
            f"{os.getuid()}); contextd keeps each person's memory apart, so {advice}."
        )
    if not stat.S_ISDIR(info.st_mode):
        return f"{home} is a file, not a folder; {advice}."
    if not os.access(home, os.R_OK | os.X_OK):
        return f"Cannot open {home}: its permissions shut you out; chmod 700 {home} or {advice}."
    if not _contextd_or_empty(home):
        inside = os.path.join(home, ".contextd")
        return (
            f"{home} holds files that are not contextd's, so it cannot be a contextd home; "
            f"give a folder of its own, such as {inside}, with --home or $CONTEXTD_HOME."
        )
    return None


def _contextd_or_empty(home: str) -> bool:
    """Whether `home` is a contextd home already or an empty folder contextd may adopt."""
    if any(os.path.lexists(os.path.join(home, mark)) for mark in _HOME_MARKS):
        return True
    try:
        with os.scandir(home) as entries:
            return next(entries, None) is None
    except OSError:
        return True  # unreadable: the checks above and opening the store say why


def make_private(home: str | os.PathLike[str]) -> str | None:
    """Create the home with mode 0700, or close an existing one of ours that group or others
    could reach (the folder only: what is in it was created private); a one-line note when
    its mode was changed, else None.

    Raises:
        OSError: the folder cannot be created.
    """
    home = os.fspath(home)
    try:
        info = os.stat(home)
    except FileNotFoundError:
        make_folders(home)
        return None
    if info.st_uid != os.getuid() or not info.st_mode & _OTHERS:
        return None  # another user's home is theirs to fix; ours is already private
    if not _contextd_or_empty(home):
        return None  # not a contextd home: refused where it is resolved, never changed
    loose = stat.S_IMODE(info.st_mode)
    os.chmod(home, loose & ~_OTHERS)
    return (
        f"Note: {home} was open to other users (mode {loose:o}); contextd made the folder "
        "private to you."
    )


def make_folders(path: str | os.PathLike[str]) -> None:
    """Create `path` and any missing parents, each with mode 0700 (os.makedirs gives only the
    last one its mode)."""
    missing: list[str] = []
    folder = os.path.abspath(path)
    while not os.path.isdir(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_FOLDER)
        except FileExistsError:
            continue


def open_private(path: str | os.PathLike[str], flags: int) -> int:
    """os.open with mode 0600 for a file it creates, whatever the umask."""
    return os.open(path, flags | os.O_CLOEXEC, PRIVATE_FILE)


def owned_and_closed(info: os.stat_result) -> bool:
    """Whether a file or folder belongs to this user and no one else can write to it."""
    return info.st_uid == os.getuid() and not info.st_mode & 0o022
