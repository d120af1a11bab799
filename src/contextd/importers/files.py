"""Reading a source's files with bounds: a folder that must exist, a file that must be small
UTF-8 text. Every failure is one sentence naming the path."""

from pathlib import Path

from contextd.core.workspace.capped import MB, Cap, read_capped
from contextd.errors import InvalidInputError

__all__ = ["MAX_ENTRIES", "MAX_FILE_BYTES", "read_bounded", "source_folder"]

MAX_FILE_BYTES = 16 * MB  # far above any real store; a bigger file is not one
MAX_ENTRIES = 10_000  # entries (or notes) one import may carry


def source_folder(folder: Path, what: str) -> Path:
    """`folder`, checked to be an existing, readable folder.

    Raises:
        InvalidInputError: it is missing, a file, or unreadable.
    """
    if not folder.exists():
        raise InvalidInputError(f"No folder at {folder}; give the path of {what}.")
    if not folder.is_dir():
        raise InvalidInputError(f"{folder} is a file, not a folder; give the path of {what}.")
    try:
        next(folder.iterdir(), None)
    except OSError as exc:
        raise InvalidInputError(f"Cannot read the folder {folder}: {exc.strerror}.") from None
    return folder


def read_bounded(path: Path, limit: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of `path`, refused past `limit` bytes without reading it all.

    Raises:
        InvalidInputError: unreadable, too big, or not UTF-8.
    """
    cap = Cap(limit, "a memory file", "check that it is the right file")
    try:
        data = read_capped(path, cap)
    except OSError as exc:
        raise InvalidInputError(f"Cannot read {path}: {exc.strerror}.") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidInputError(
            f"{path} is not UTF-8 text; convert it or check that it is the right file."
        ) from None
