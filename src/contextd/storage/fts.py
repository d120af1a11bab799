"""Full-text candidates, ranked by bm25, with user text made safe to match: the words are
picked here, the matching is the dialect's (FTS5 in SQLite, tsvector in PostgreSQL)."""

import re

from contextd.errors import InvalidQueryError
from contextd.storage.connection import Connection, dialect_of
from contextd.storage.dialect import LexicalMatches
from contextd.storage.records import RecordFilter
from contextd.storage.sqlite_dialect import or_expression

__all__ = [
    "MAX_TERMS",
    "LexicalMatches",
    "fts_candidates",
    "lexical_matches",
    "match_expression",
    "query_words",
]

MAX_TERMS = 16
_WORD = re.compile(r"\w+", re.UNICODE)
_STOP_WORDS = frozenset(
    """a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers him his how i if in into is it its itself just me more
    most my no nor not of off on once only or other our ours out over own same she should so some
    such than that the their theirs them then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you your
    yours""".split()
)


def query_words(text: str) -> list[str]:
    """The words of `text` worth matching: stop words dropped (unless nothing else is left),
    repeats removed, at most MAX_TERMS.

    Raises:
        InvalidQueryError: the text holds no word to search for.
    """
    words = [w.lower() for w in _WORD.findall(text.replace("\x00", " "))]
    if not words:
        raise InvalidQueryError("The query has no words to search for; type a few keywords.")
    kept = [w for w in words if w not in _STOP_WORDS and len(w) > 1] or words
    return list(dict.fromkeys(kept))[:MAX_TERMS]


def match_expression(text: str) -> str:
    """Turn what a person typed into a safe FTS5 query: quoted words joined by OR.

    Stop words are dropped (unless nothing else is left) and at most MAX_TERMS words are kept,
    so FTS5 operators and stray quotes in user text cannot break or slow the match.

    Raises:
        InvalidQueryError: the text holds no word to search for.
    """
    return or_expression(query_words(text))


def lexical_matches(conn: Connection, text: str, scope: RecordFilter, limit: int) -> LexicalMatches:
    """Records matching `text` inside `scope`, best first, and how much of the query the best
    one covers (see LexicalMatches).

    Raises:
        InvalidQueryError: the text holds no word to search for.
    """
    return dialect_of(conn).lexical_matches(conn, query_words(text), scope, limit)


def fts_candidates(
    conn: Connection, text: str, scope: RecordFilter, limit: int
) -> list[tuple[str, float]]:
    """Ids of records matching `text` inside `scope`, best first, with bm25 relevance (> 0).

    Raises:
        InvalidQueryError: the text holds no word to search for.
    """
    return lexical_matches(conn, text, scope, limit).hits
