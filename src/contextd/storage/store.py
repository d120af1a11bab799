"""The store behind one interface, whichever database holds it: the embedded SQLite file
(sqlite/database.py, the default) or a PostgreSQL server shared by a team
(postgres/database.py).

Everything above storage holds a `Database` and hands the connections it gives to the
functions of the storage modules; none of it knows which backend runs. A connection takes
portable SQL with `?` placeholders and names its dialect for the rest (see dialect.py).
"""

from abc import ABC, abstractmethod
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from contextd.storage.connection import Connection
    from contextd.storage.dialect import Dialect

__all__ = ["BUSY_TIMEOUT_MS", "Database"]

BUSY_TIMEOUT_MS = 15_000  # how long a write waits for another writer, by default


class Database(ABC):
    """A contextd store, shared across threads: each thread gets its own connection."""

    backend: ClassVar[str]  # "sqlite" or "postgresql"
    path: Path | str  # where it is, for messages: the file, or the server's URL (no password)

    @property
    @abstractmethod
    def read_only(self) -> bool:
        """Whether every write is refused (a home that cannot be written, a read replica)."""

    @property
    @abstractmethod
    def dialect(self) -> "Dialect":
        """How this backend spells what portable SQL cannot."""

    @property
    def developer(self) -> str:
        """Whose sessions and personal records this store's connections read and write: ''
        for a home's store (one developer); on a team server, who the server says we are;
        within `acting_as`, the developer a request acts for."""
        return self.dialect.developer

    @abstractmethod
    def connection(self) -> "Connection":
        """This thread's connection, opened on first use; each statement commits by itself."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager["Connection"]:
        """A write transaction, one writer at a time (a savepoint when one is already open):
        committed when the block ends, rolled back when it raises."""

    @abstractmethod
    def snapshot(self) -> AbstractContextManager["Connection"]:
        """A read transaction: several reads see one state of the store, nothing is written."""

    @abstractmethod
    def change_token(self) -> tuple[int, int]:
        """Differs whenever anything was committed since it was last read, by this process or
        another one; cheap (no table read)."""

    @abstractmethod
    def close(self) -> None:
        """Close every connection this store opened."""

    def warm(self) -> None:  # noqa: B027 - optional: a file needs no warming
        """Open what the query path needs now (a long-lived process calls this once)."""
