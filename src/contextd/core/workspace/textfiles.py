"""Reading and replacing the text files people also edit (agent files, the mirror), safely:
a write goes to a scratch file first, so a crash never leaves half a file."""

import hashlib
import os
import tempfile
from pathlib import Path

from contextd.core.workspace.capped import MB, Cap, read_capped
from contextd.errors import InvalidInputError
from contextd.home_folder import make_folders

__all__ = ["NOTES_FILE", "confined", "read_text", "sha256_text", "write_text_atomic"]

# Agent files (CLAUDE.md, AGENTS.md, rules) and the mirror's: notes, far below this.
NOTES_FILE = Cap(16 * MB, "a file of notes contextd reads", "check that it is the file you meant")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def confined(folder: Path, relative: str) -> Path:
    """`folder / relative`, once it is sure to lie inside `folder` (after `..` and symbolic
    links are resolved): a name that came from stored data never writes elsewhere.

    Raises:
        InvalidInputError: the path would leave the folder.
    """
    base = folder.resolve()
    path = (base / relative).resolve()
    if relative.startswith(("/", "\\")) or not path.is_relative_to(base) or path == base:
        raise InvalidInputError(
            f"{relative!r} would lead outside {folder}; contextd writes only inside it (a "
            "project slug or record id of that shape did not come from contextd)."
        )
    return base / relative


def read_text(path: Path, cap: Cap = NOTES_FILE) -> str | None:
    """The file's text (line endings kept), or None when it does not exist.

    Raises:
        InvalidInputError: it cannot be read, is larger than `cap` allows, or is not UTF-8.
    """
    try:
        return read_capped(path, cap).decode("utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except UnicodeDecodeError:
        raise InvalidInputError(
            f"{path} is not UTF-8 text; contextd leaves it alone (convert it or choose another "
            "file)."
        ) from None
    except OSError as exc:
        raise InvalidInputError(f"Cannot read {path}: {exc.strerror}.") from exc


def write_text_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` in one step, creating its folders; new files and folders are
    its user's alone, a replaced file keeps its mode.

    Raises:
        InvalidInputError: the folder or file cannot be written (permissions, a file in the
            way, a full disk).
    """
    scratch: str | None = None
    try:
        make_folders(path.parent)
        handle, scratch = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        if path.exists():  # (mkstemp made the scratch file 0600)
            os.chmod(scratch, path.stat().st_mode & 0o7777)
        os.replace(scratch, path)
        scratch = None
    except OSError as exc:
        raise InvalidInputError(
            f"Cannot write {path} ({exc.strerror or exc}); choose another path or fix its "
            "permissions."
        ) from exc
    finally:
        if scratch is not None:
            Path(scratch).unlink(missing_ok=True)
