"""Full-text candidates for a query inside a record filter, from the connection's own index
(contextd.storage.fulltext says how words are picked and matched)."""

from contextd.storage.connection import Connection
from contextd.storage.filters import RecordFilter
from contextd.storage.fulltext import LexicalMatches, query_words

__all__ = ["LexicalMatches", "fts_candidates", "lexical_matches"]


def lexical_matches(conn: Connection, text: str, scope: RecordFilter, limit: int) -> LexicalMatches:
    """Records matching `text` inside `scope`, best first, and how much of the query the best
    one covers (see LexicalMatches).

    Raises:
        InvalidQueryError: the text holds no word to search for.
    """
    where = scope.where(conn.dialect, "r")
    narrow = scope.within_scope_index
    return conn.full_text.matches(conn, query_words(text), where, limit, narrow=narrow)


def fts_candidates(
    conn: Connection, text: str, scope: RecordFilter, limit: int
) -> list[tuple[str, float]]:
    """Ids of records matching `text` inside `scope`, best first, with bm25 relevance (> 0).

    Raises:
        InvalidQueryError: the text holds no word to search for.
    """
    return lexical_matches(conn, text, scope, limit).hits
