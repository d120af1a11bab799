"""Text split into terms exactly as the embedded store's full-text index splits it: SQLite's
own FTS5 tokenizer (porter unicode61 remove_diacritics 2) run in memory, one per thread."""

import sqlite3
import threading

__all__ = ["tokenizer", "word_terms"]

_local = threading.local()


def tokenizer() -> sqlite3.Connection:
    """This thread's in-memory FTS5 table `t` (columns a-d, as records_fts's four) and its
    `v` vocabulary of instances; write to it only inside a transaction rolled back."""
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


def word_terms(texts: list[str]) -> list[list[str]]:
    """The terms of each text, in order, each once (a query word usually gives one; a word
    FTS5 splits, such as snake_case, gives several)."""
    conn = tokenizer()
    conn.execute("BEGIN")
    try:
        conn.executemany(
            "INSERT INTO t(rowid, a) VALUES (?, ?)", [(i, w) for i, w in enumerate(texts, 1)]
        )
        found = conn.execute("SELECT doc, term FROM v ORDER BY doc, offset").fetchall()
    finally:
        conn.execute("ROLLBACK")
    out: list[list[str]] = [[] for _ in texts]
    for doc, term in found:
        if term not in out[doc - 1]:
            out[doc - 1].append(term)
    return out
