"""What every storage function is handed: a connection that takes `?` placeholders, the
dialect of the database behind it (the embedded SQLite file or a PostgreSQL server) and its
full-text index."""

from typing import Protocol

from contextd.storage.cursor import Cursor, Executor
from contextd.storage.dialect import Dialect
from contextd.storage.fulltext import FullText

__all__ = ["Connection", "Cursor"]


class Connection(Executor, Protocol):
    """One database connection: portable SQL runs as is on either backend; what is spelled
    differently is asked of `dialect`, full-text matching of `full_text`."""

    @property
    def dialect(self) -> Dialect: ...

    @property
    def full_text(self) -> FullText: ...
