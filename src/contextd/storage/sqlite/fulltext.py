"""Full-text candidates from SQLite's FTS5 index, ranked by bm25: each word's statistics kept
per connection between searches, the words most records hold dropped in a large store, and
how much of the query the best hit covers."""

import sqlite3
import threading
import weakref
from typing import cast

from msgspec import Struct

from contextd.storage.cursor import Executor
from contextd.storage.fulltext import (
    COLUMN_WEIGHTS,
    COMMON_SHARE,
    SMALL_STORE,
    FullText,
    LexicalMatches,
    idf,
    query_words,
)

__all__ = ["FTS5", "Fts5", "match_expression", "or_expression"]

_LISTED = 256  # a word in at most this many records has its records listed, not just counted


class Fts5(FullText):
    """The FTS5 table records_fts, kept by triggers on the records table."""

    def matches(
        self,
        conn: Executor,
        words: list[str],
        scope: tuple[str, list[object]],
        limit: int,
        *,
        narrow: bool = False,
    ) -> LexicalMatches:
        total, stats = _statistics(conn, words)
        ranked = _ranked(conn, _selective(words, stats, total), scope, limit, narrow)
        if not ranked:
            return LexicalMatches([], 0.0, {})
        rarity = {word: idf(total, stat.records) for word, stat in stats.items()}
        coverage = _coverage(conn, stats, rarity, ranked[0][1])
        return LexicalMatches([(rid, score) for rid, _, score in ranked], coverage, rarity)


FTS5 = Fts5()


def match_expression(text: str) -> str:
    """What a person typed as a safe FTS5 query: its words (fulltext.query_words) quoted and
    joined by OR, so FTS5 operators and stray quotes in user text cannot break or slow it.

    Raises:
        InvalidQueryError: the text holds no word to search for.
    """
    return or_expression(query_words(text))


def or_expression(words: list[str]) -> str:
    """An FTS5 query: each word quoted (so no operator or stray quote can act), joined by OR."""
    return " OR ".join(f'"{w}"' for w in words)


class _Word(Struct, frozen=True):
    records: int  # how many records hold the word
    rows: frozenset[int] | None  # their rowids, when few enough to list


class _Statistics:
    """What one connection last learned of the index: the record count and each word's
    records, as of `token`."""

    def __init__(self) -> None:
        self.token: tuple[int, int] | None = None
        self.total = 0
        self.words: dict[str, _Word] = {}


_KEPT_WORDS = 2048  # per connection; past this the statistics start again
_statistics_of: "weakref.WeakKeyDictionary[Executor, _Statistics]" = weakref.WeakKeyDictionary()
_statistics_lock = threading.Lock()


def _statistics(conn: Executor, words: list[str]) -> tuple[int, dict[str, _Word]]:
    """The record count and each word's statistics, read again only after a change: a
    resident process sees the same words query after query (~1-2 ms each at 10k records).
    Kept per connection, whose data_version moves when another connection commits and whose
    total_changes moves when it writes itself."""
    own_changes = cast(sqlite3.Connection, conn).total_changes
    token = (conn.execute("PRAGMA data_version").fetchone()[0], own_changes)
    with _statistics_lock:
        known = _statistics_of.setdefault(conn, _Statistics())
    if known.token != token or len(known.words) > _KEPT_WORDS:
        known.token = token
        known.total = conn.execute("SELECT count(*) FROM records").fetchone()[0]
        known.words = {}
    unknown = [w for w in words if w not in known.words]
    known.words.update(_words(conn, unknown))
    return known.total, {w: known.words[w] for w in words}


def _words(conn: Executor, words: list[str]) -> dict[str, _Word]:
    """How common each word is; a rare word's records are listed in the same pass."""
    found = {}
    for word in words:
        rows = conn.execute(
            "SELECT rowid FROM records_fts WHERE records_fts MATCH ? LIMIT ?",
            (or_expression([word]), _LISTED + 1),
        ).fetchall()
        if len(rows) <= _LISTED:
            found[word] = _Word(len(rows), frozenset(r[0] for r in rows))
            continue
        count = conn.execute(
            "SELECT count(*) FROM records_fts WHERE records_fts MATCH ?", (or_expression([word]),)
        ).fetchone()[0]
        found[word] = _Word(count, None)
    return found


def _selective(words: list[str], stats: dict[str, _Word], total: int) -> list[str]:
    """Drop words found in most records: they barely move bm25 but make FTS5 score nearly
    every row. If every word found is that common, the rarest of them stays (a word no
    record holds would match nothing)."""
    if len(words) < 2 or total < SMALL_STORE:
        return words
    found = [w for w in words if stats[w].records > 0]
    kept = [w for w in found if stats[w].records <= total * COMMON_SHARE]
    return kept or [min(found or words, key=lambda w: stats[w].records)]


def _coverage(
    conn: Executor, stats: dict[str, _Word], rarity: dict[str, float], rowid: int
) -> float:
    """The idf-weighted share of the words that the record at `rowid` holds."""
    held = weight = 0.0
    for word, stat in stats.items():
        weight += rarity[word]
        if stat.rows is not None:
            present = rowid in stat.rows
        else:
            present = (
                conn.execute(
                    "SELECT 1 FROM records_fts WHERE records_fts MATCH ? AND rowid = ?",
                    (or_expression([word]), rowid),
                ).fetchone()
                is not None
            )
        held += rarity[word] if present else 0.0
    return held / weight if weight > 0 else 0.0


def _ranked(
    conn: Executor, words: list[str], scope: tuple[str, list[object]], limit: int, narrow: bool
) -> list[tuple[str, int, float]]:
    where, params = scope
    weights = ", ".join(str(w) for w in COLUMN_WEIGHTS)
    # Named, because without statistics SQLite would rather read each match's whole row.
    index = " INDEXED BY records_seq_scope" if narrow else ""
    sql = (
        f"SELECT r.id, r.seq, bm25(records_fts, {weights}) AS rank "
        f"FROM records_fts JOIN records AS r{index} ON r.seq = records_fts.rowid "
        f"WHERE records_fts MATCH ? AND {where} ORDER BY rank LIMIT ?"
    )
    rows = conn.execute(sql, (or_expression(words), *params, limit)).fetchall()
    return [(str(row[0]), int(row[1]), -float(row[2])) for row in rows]
