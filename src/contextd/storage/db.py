"""Where the rest of contextd gets its store from: the backend-neutral `Database` (store.py),
and the embedded SQLite file's helpers, kept importable from here."""

from contextd.storage.sqlite_db import APPLICATION_ID, store_writable, translate_errors
from contextd.storage.store import BUSY_TIMEOUT_MS, Database

__all__ = ["APPLICATION_ID", "BUSY_TIMEOUT_MS", "Database", "store_writable", "translate_errors"]
