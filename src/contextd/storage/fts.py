"""Full-text candidates from the FTS5 index, ranked by bm25, with user text made safe to match."""

import math
import re
import sqlite3

from msgspec import Struct

from contextd.errors import InvalidQueryError
from contextd.storage.records import RecordFilter

__all__ = ["MAX_TERMS", "LexicalMatches", "fts_candidates", "lexical_matches", "match_expression"]

MAX_TERMS = 16
_SMALL_STORE = 2000  # below this every word is kept: scoring all matches is cheap
_COMMON_SHARE = 0.25
_LISTED = 256  # a word in at most this many records has its records listed, not just counted
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


class LexicalMatches(Struct, frozen=True):
    """What the full-text index says about one query."""

    hits: list[tuple[str, float]]  # record id, bm25 relevance (> 0), best first
    # How much of the query the best hit contains: the share of the query's words it holds,
    # each word weighted by its rarity (idf). 1: every word, so a rare exact term or name is
    # there; near 0: the record shares only common words, or nothing, with the query.
    coverage: float


class _Word(Struct, frozen=True):
    records: int  # how many records hold the word
    rows: frozenset[int] | None  # their rowids, when few enough to list


def _words(conn: sqlite3.Connection, words: list[str]) -> dict[str, _Word]:
    """How common each word is; a rare word's records are listed in the same pass."""
    found = {}
    for word in words:
        rows = conn.execute(
            "SELECT rowid FROM records_fts WHERE records_fts MATCH ? LIMIT ?",
            (_or([word]), _LISTED + 1),
        ).fetchall()
        if len(rows) <= _LISTED:
            found[word] = _Word(len(rows), frozenset(r[0] for r in rows))
            continue
        count = conn.execute(
            "SELECT count(*) FROM records_fts WHERE records_fts MATCH ?", (_or([word]),)
        ).fetchone()[0]
        found[word] = _Word(count, None)
    return found


def _selective(words: list[str], stats: dict[str, _Word], total: int) -> list[str]:
    """Drop words found in most records: they barely move bm25 but make FTS5 score nearly
    every row. If every word found is that common, the rarest of them stays (a word no
    record holds would match nothing)."""
    if len(words) < 2 or total < _SMALL_STORE:
        return words
    found = [w for w in words if stats[w].records > 0]
    kept = [w for w in found if stats[w].records <= total * _COMMON_SHARE]
    return kept or [min(found or words, key=lambda w: stats[w].records)]


def _coverage(conn: sqlite3.Connection, stats: dict[str, _Word], total: int, rowid: int) -> float:
    """The idf-weighted share of the words that the record at `rowid` holds."""
    held = weight = 0.0
    for word, stat in stats.items():
        idf = math.log(1.0 + (total - stat.records + 0.5) / (stat.records + 0.5))
        weight += idf
        if stat.rows is not None:
            present = rowid in stat.rows
        else:
            present = (
                conn.execute(
                    "SELECT 1 FROM records_fts WHERE records_fts MATCH ? AND rowid = ?",
                    (_or([word]), rowid),
                ).fetchone()
                is not None
            )
        held += idf if present else 0.0
    return held / weight if weight > 0 else 0.0


def _ranked(
    conn: sqlite3.Connection, words: list[str], scope: RecordFilter, limit: int
) -> list[tuple[str, int, float]]:
    where, params = scope.where("r")
    weights = ", ".join(str(w) for w in _COLUMN_WEIGHTS)
    sql = (
        f"SELECT r.id, r.seq, bm25(records_fts, {weights}) AS rank "
        "FROM records_fts JOIN records AS r ON r.seq = records_fts.rowid "
        f"WHERE records_fts MATCH ? AND {where} ORDER BY rank LIMIT ?"
    )
    rows = conn.execute(sql, (_or(words), *params, limit)).fetchall()
    return [(str(row[0]), int(row[1]), -float(row[2])) for row in rows]


def lexical_matches(
    conn: sqlite3.Connection, text: str, scope: RecordFilter, limit: int
) -> LexicalMatches:
    """Records matching `text` inside `scope`, best first, and how much of the query the best
    one covers.

    Raises:
        InvalidQueryError: the text holds no word to search for.
    """
    words = query_words(text)
    total = conn.execute("SELECT count(*) FROM records").fetchone()[0]
    stats = _words(conn, words)
    ranked = _ranked(conn, _selective(words, stats, total), scope, limit)
    coverage = _coverage(conn, stats, total, ranked[0][1]) if ranked else 0.0
    return LexicalMatches([(rid, score) for rid, _, score in ranked], coverage)


def fts_candidates(
    conn: sqlite3.Connection, text: str, scope: RecordFilter, limit: int
) -> list[tuple[str, float]]:
    """Ids of records matching `text` inside `scope`, best first, with bm25 relevance (> 0)."""
    return lexical_matches(conn, text, scope, limit).hits
