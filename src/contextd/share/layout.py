"""Where a checkout keeps its shared records (`.contextd/records/`). The standard library only:
every command asks, and most projects are not shared."""

import hashlib
from pathlib import Path

__all__ = ["FOLDER", "RECORDS", "digest_of", "records_folder", "shared_checkout"]

FOLDER = ".contextd"
RECORDS = "records"


def records_folder(checkout: str | Path) -> Path:
    return Path(checkout) / FOLDER / RECORDS


def shared_checkout(checkout: str | Path | None) -> bool:
    """Whether a checkout holds shared memory: a `.contextd` folder (its README keeps it in
    git when a branch holds no record, and git drops the empty `records/` folder)."""
    return checkout is not None and (Path(checkout) / FOLDER).is_dir()


def digest_of(data: bytes) -> str:
    """The hash a record file is known by."""
    return hashlib.sha256(data).hexdigest()
