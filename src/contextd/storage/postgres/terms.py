"""Full-text terms exactly as the embedded store indexes them: SQLite's own FTS5 tokenizer
(porter unicode61 remove_diacritics 2) run in memory, so the server's tsvector holds the same
terms, per column, and bm25 ranks alike on both backends."""

from collections import defaultdict

from contextd.storage.fts5_terms import tokenizer, word_terms
from contextd.storage.fulltext import IndexedText

__all__ = ["MAX_POSITIONS", "indexed_terms", "quoted", "word_terms"]

MAX_POSITIONS = 256  # a tsvector keeps at most this many positions of one lexeme
_WEIGHTS = {"a": "A", "b": "B", "c": "C", "d": "D"}  # title, body, tags, hints


def indexed_terms(text: IndexedText) -> tuple[str, int]:
    """The tsvector (as its text form) of a record's indexed texts, each term weighted by the
    column it came from, and how many tokens they hold (bm25's document length)."""
    conn = tokenizer()
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


def quoted(term: str) -> str:
    """A lexeme as tsvector and tsquery text spell it."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"
