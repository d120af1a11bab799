"""What SQL the two stores spell differently, in one place: the few fragments portable SQL
cannot say, how a vector is stored, and which rows the developer a connection works for may
see (every row in a home's store, which has one developer; on a team server, the team's and
their own personal ones).

Storage modules keep one portable SQL text per statement and ask the connection's dialect
(`conn.dialect`) for the rest; SQLite's is sqlite/dialect.py, PostgreSQL's postgres/dialect.py.
Full-text matching, a strategy rather than a fragment, is each backend's FullText (fulltext.py).
"""

from abc import ABC, abstractmethod
from typing import ClassVar

from contextd.storage.vector_bytes import encode

__all__ = ["Dialect"]


class Dialect(ABC):
    """The SQL one backend needs where portable SQL cannot say it."""

    name: ClassVar[str]  # "sqlite" or "postgresql"
    null_safe_eq: ClassVar[str]  # `a <op> b` is true when both are NULL or equal
    index_join: ClassVar[str]  # a join from a small list into an indexed table
    vector_placeholder: ClassVar[str] = "?"  # where a vector parameter goes
    # Who owns the personal rows this connection writes, and may see them: '' in a home's
    # store (one developer, nothing kept apart); a developer's identity on a team server.
    developer: str = ""

    def visible(self, table: str, alias: str | None = None) -> tuple[str, tuple[object, ...]]:
        """A condition and its parameters: the row `alias` (default: the table's name) of
        `table`, "records" or "sessions", is one this connection's developer may see."""
        return "1 = 1", ()

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
