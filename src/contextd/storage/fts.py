"""Full-text candidates from the FTS5 index, ranked by bm25, with user text made safe to match."""

import re
import sqlite3

from contextd.errors import InvalidQueryError
from contextd.storage.records import RecordFilter

__all__ = ["MAX_TERMS", "fts_candidates", "match_expression"]

MAX_TERMS = 16
_SMALL_STORE = 2000  # below this every word is kept: scoring all matches is cheap
_COMMON_SHARE = 0.25
# bm25 weights per indexed column: title, body_text, tags, retrieval_hints.
_COLUMN_WEIGHTS = (4.0, 1.0, 2.0, 2.0)
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
    return _or(query_words(text))


def _or(words: list[str]) -> str:
    return " OR ".join(f'"{w}"' for w in words)


def _selective(conn: sqlite3.Connection, words: list[str]) -> list[str]:
    """Drop words found in most records: they barely move bm25 but make FTS5 score nearly
    every row. If every word is that common, the rarest one stays."""
    if len(words) < 2:
        return words
    total = conn.execute("SELECT count(*) FROM records").fetchone()[0]
    if total < _SMALL_STORE:
        return words
    counts = {
        w: conn.execute(
            "SELECT count(*) FROM records_fts WHERE records_fts MATCH ?", (_or([w]),)
        ).fetchone()[0]
        for w in words
    }
    kept = [w for w in words if counts[w] <= total * _COMMON_SHARE]
    return kept or [min(words, key=lambda w: counts[w])]


def fts_candidates(
    conn: sqlite3.Connection, text: str, scope: RecordFilter, limit: int
) -> list[tuple[str, float]]:
    """Ids of records matching `text` inside `scope`, best first, with bm25 relevance (> 0)."""
    where, params = scope.where("r")
    weights = ", ".join(str(w) for w in _COLUMN_WEIGHTS)
    sql = (
        f"SELECT r.id, bm25(records_fts, {weights}) AS rank "
        "FROM records_fts JOIN records AS r ON r.seq = records_fts.rowid "
        f"WHERE records_fts MATCH ? AND {where} ORDER BY rank LIMIT ?"
    )
    expression = _or(_selective(conn, query_words(text)))
    rows = conn.execute(sql, (expression, *params, limit)).fetchall()
    return [(str(row[0]), -float(row[1])) for row in rows]
