"""What SQL the two stores spell differently, in one place: the few fragments portable SQL
cannot say, how a vector is stored, and which rows the developer a connection works for may
see (every row in a home's store, which has one developer; on a team server, the team's and
their own personal ones).

Storage modules keep one portable SQL text per statement and ask the connection's dialect
(`conn.dialect`) for the rest; SQLite's is sqlite/dialect.py, PostgreSQL's postgres/dialect.py.
Full-text matching, a strategy rather than a fragment, is each backend's FullText (fulltext.py).
"""

from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import ClassVar

from contextd.storage.vector_bytes import encode

__all__ = ["Dialect", "acting_as"]

# The developer a request works for when one process serves several (`contextd serve`: the
# token's), over the connection's own. Set per request, so it follows the request into the
# threads its work runs on.
_ACTING: ContextVar[str | None] = ContextVar("contextd_acting_developer", default=None)


@contextmanager
def acting_as(developer: str) -> Iterator[None]:
    """Within the block, every connection reads and writes as `developer`: its sessions and
    personal records, kept apart from everyone else's (in a home's store too)."""
    token = _ACTING.set(developer)
    try:
        yield
    finally:
        _ACTING.reset(token)


class Dialect(ABC):
    """The SQL one backend needs where portable SQL cannot say it."""

    name: ClassVar[str]  # "sqlite" or "postgresql"
    null_safe_eq: ClassVar[str]  # `a <op> b` is true when both are NULL or equal
    index_join: ClassVar[str]  # a join from a small list into an indexed table
    vector_placeholder: ClassVar[str] = "?"  # where a vector parameter goes
    # Whether developers are kept apart without a request acting for one: on a team server.
    apart: ClassVar[bool] = False
    # Who owns the personal rows this connection writes, and may see them: '' in a home's
    # store (one developer, nothing kept apart); a developer's identity on a team server.
    own_developer: str = ""

    @property
    def developer(self) -> str:
        """Whose personal rows are read and written: the developer a request acts for
        (`acting_as`), else the connection's own."""
        return _ACTING.get() or self.own_developer

    def visible(self, table: str, alias: str | None = None) -> tuple[str, tuple[object, ...]]:
        """A condition and its parameters: the row `alias` (default: the table's name) of
        `table`, "records" or "sessions", is one this connection's developer may see: a
        record the team's (no owner) or theirs, a session (an agent's session, a held draft)
        theirs. A home's store keeps nothing apart unless a request acts for a developer."""
        if not self.apart and _ACTING.get() is None:
            return "1 = 1", ()
        row = alias or table
        if table in ("sessions", "capture_sessions", "review_queue"):
            return f"{row}.developer = ?", (self.developer,)
        return f"({row}.owner = '' OR {row}.owner = ?)", (self.developer,)

    @abstractmethod
    def column_names(self, table: str) -> tuple[str, tuple[object, ...]]:
        """A query and its parameters: the names of `table`'s columns, in their order."""

    @abstractmethod
    def json_rows(self, source: str, alias: str) -> str:
        """A FROM item: the text values of the JSON list `source` (a column or `?`) as a table
        named `alias` with one column, `value`."""

    @abstractmethod
    def json_list_has(self, column: str) -> str:
        """A condition: the JSON list of texts in `column` holds the next `?` parameter."""

    @abstractmethod
    def greatest(self, first: str, second: str) -> str:
        """The larger of two values."""

    @abstractmethod
    def contains(self, text: str) -> str:
        """A condition: the SQL text `text` holds the next `?` parameter as a substring."""

    def vector_param(self, vector: list[float]) -> object:
        """A vector as a statement parameter for the embeddings table."""
        return encode(vector)

    def vector_column(self, expression: str) -> str:
        """A stored vector selected so that `vector_blob` can read it."""
        return expression

    def vector_blob(self, value: object) -> bytes:
        """A selected vector as float32 little-endian bytes."""
        assert isinstance(value, bytes)
        return value
