"""What differs between the two stores, in one place: the few SQL fragments that are spelled
differently, full-text candidates (FTS5 bm25 / tsvector), how a vector is stored, and which
rows the developer a connection works for may see (every row in a home's store, which has one
developer; on a team server, the team's and their own personal ones).

Storage modules keep one portable SQL text per statement and ask the connection's dialect
(`dialect_of(conn)`) for the rest; the SQLite dialect is in sqlite_dialect.py, the PostgreSQL
one in postgres/dialect.py.
"""

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

from msgspec import Struct

if TYPE_CHECKING:
    from contextd.storage.connection import Connection
    from contextd.storage.records import RecordFilter

__all__ = ["Dialect", "IndexedText", "LexicalMatches"]

# The four texts full-text search indexes, in FTS5's column order: title, body_text, tags
# (their JSON text), retrieval_hints (their JSON text).
IndexedText = tuple[str, str, str, str]


class LexicalMatches(Struct, frozen=True):
    """What the full-text index says about one query."""

    hits: list[tuple[str, float]]  # record id, bm25 relevance (> 0), best first
    # How much of the query the best hit contains: the share of the query's words it holds,
    # each word weighted by its rarity (idf). 1: every word, so a rare exact term or name is
    # there; near 0: the record shares only common words, or nothing, with the query.
    coverage: float


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

    @abstractmethod
    def lexical_matches(
        self, conn: "Connection", words: list[str], scope: "RecordFilter", limit: int
    ) -> LexicalMatches:
        """Records matching any of `words` inside `scope`, best first, with their bm25
        relevance (> 0), and how much of the query the best one covers."""

    def fts_columns(self, text: IndexedText) -> tuple[tuple[str, str, object], ...]:
        """Extra columns a records row stores for full-text search, each as (name, placeholder,
        value); none where the database indexes the text itself (SQLite's FTS5 triggers)."""
        return ()

    def vector_param(self, vector: list[float]) -> object:
        """A vector as a statement parameter for the embeddings table."""
        from contextd.storage.vectors import encode

        return encode(vector)

    def vector_column(self, expression: str) -> str:
        """A stored vector selected so that `vector_blob` can read it."""
        return expression

    def vector_blob(self, value: object) -> bytes:
        """A selected vector as float32 little-endian bytes."""
        assert isinstance(value, bytes)
        return value
