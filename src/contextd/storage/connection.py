"""What every storage function is handed: a connection that takes `?` placeholders, and the
dialect of the database behind it (the embedded SQLite file or a PostgreSQL server)."""

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from contextd.storage.dialect import Dialect

__all__ = ["Connection", "Cursor", "dialect_of"]


class Cursor(Protocol):
    """The rows of one statement (a DB-API cursor)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def fetchmany(self, size: int = 1) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """One database connection: portable SQL with `?` placeholders runs as is on either
    backend; what differs is asked of `dialect`. Failures arrive as StoreError (or an
    integrity error a caller handles)."""

    @property
    def dialect(self) -> "Dialect": ...

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor: ...

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> Cursor: ...


def dialect_of(conn: Connection) -> "Dialect":
    """The connection's dialect; a plain sqlite3 connection (a script's, a test's) is SQLite."""
    found = getattr(conn, "dialect", None)
    if found is not None:
        return found  # type: ignore[no-any-return]
    from contextd.storage.sqlite_dialect import SQLITE

    return SQLITE
