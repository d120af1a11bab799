"""Opening a store file by its path, for what above storage needs a second store (`store
copy`'s target): which backend keeps a file is storage's to know. A team server's URL is
opened by contextd.storage.server."""

from pathlib import Path

from contextd.storage.sqlite.database import SqliteDatabase
from contextd.storage.store import Database

__all__ = ["open_file"]


def open_file(path: Path) -> Database:
    """The store in the file at `path`, created and migrated when there is none.

    Raises:
        StoreError: the file cannot be opened, or is not a contextd store.
    """
    return SqliteDatabase.open(path)
