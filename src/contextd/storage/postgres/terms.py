"""Full-text terms exactly as the embedded store indexes them: SQLite's own FTS5 tokenizer
(porter unicode61 remove_diacritics 2) run in memory, so the server's tsvector holds the same
terms, per column, and bm25 ranks alike on both backends."""

import sqlite3
import threading
from collections import defaultdict

from contextd.storage.fulltext import IndexedText

__all__ = ["MAX_POSITIONS", "indexed_terms", "quoted", "word_terms"]

MAX_POSITIONS = 256  # a tsvector keeps at most this many positions of one lexeme
_WEIGHTS = {"a": "A", "b": "B", "c": "C", "d": "D"}  # title, body, tags, hints
_local = threading.local()


def _tokenizer() -> sqlite3.Connection:
    conn: sqlite3.Connection | None = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        conn.execute(
            "CREATE VIRTUAL TABLE t USING fts5(a, b, c, d, "
            "tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        _local.conn = conn
    return conn


def indexed_terms(text: IndexedText) -> tuple[str, int]:
    """The tsvector (as its text form) of a record's indexed texts, each term weighted by the
    column it came from, and how many tokens they hold (bm25's document length)."""
    conn = _tokenizer()
    conn.execute("BEGIN")
    try:
        conn.execute("INSERT INTO t(rowid, a, b, c, d) VALUES (1, ?, ?, ?, ?)", text)
        found = conn.execute("SELECT term, col FROM v ORDER BY col, offset").fetchall()
    finally:
        conn.execute("ROLLBACK")
    labels: dict[str, list[str]] = defaultdict(list)
    for term, column in found:
        labels[term].append(_WEIGHTS[column])
    parts = []
    for term, marks in labels.items():
        positions = ",".join(f"{i}{mark}" for i, mark in enumerate(marks[:MAX_POSITIONS], 1))
        parts.append(f"{quoted(term)}:{positions}")
    return " ".join(parts), len(found)


def word_terms(words: list[str]) -> list[list[str]]:
    """The terms each query word matches (usually one; a word FTS5 splits, such as snake_case,
    gives several)."""
    conn = _tokenizer()
    conn.execute("BEGIN")
    try:
        conn.executemany(
            "INSERT INTO t(rowid, a) VALUES (?, ?)", [(i, w) for i, w in enumerate(words, 1)]
        )
        found = conn.execute("SELECT doc, term FROM v ORDER BY doc, offset").fetchall()
    finally:
        conn.execute("ROLLBACK")
    out: list[list[str]] = [[] for _ in words]
    for doc, term in found:
        if term not in out[doc - 1]:
            out[doc - 1].append(term)
    return out


def quoted(term: str) -> str:
    """A lexeme as tsvector and tsquery text spell it."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"
