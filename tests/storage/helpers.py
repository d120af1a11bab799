"""Checks the storage tests share: the FTS index against the records table, read from disk."""

import sqlite3
from contextlib import closing
from pathlib import Path


def assert_fts_consistent(db_path: Path) -> None:
    """Run FTS5's own integrity checks on the committed store; both raise on a mismatch.

    The bare 'integrity-check' only proves the index is internally sound; with rank = 1 it
    also compares every indexed row with the external content table (records).
    """
    with closing(sqlite3.connect(db_path)) as conn:
        conn.execute("INSERT INTO records_fts(records_fts) VALUES('integrity-check')")
        conn.execute("INSERT INTO records_fts(records_fts, rank) VALUES('integrity-check', 1)")


def fts_rowids(db_path: Path, word: str) -> list[int]:
    """Rowids (records.seq) the FTS index itself holds for `word`, not joined to records."""
    with closing(sqlite3.connect(db_path)) as conn:
        rows = conn.execute(
            "SELECT rowid FROM records_fts WHERE records_fts MATCH ? ORDER BY rowid",
            (f'"{word}"',),
        ).fetchall()
    return [row[0] for row in rows]


def seq_of(db_path: Path, record_id: str) -> int:
    with closing(sqlite3.connect(db_path)) as conn:
        row = conn.execute("SELECT seq FROM records WHERE id = ?", (record_id,)).fetchone()
    assert row is not None, f"record {record_id} is not in the records table"
    return int(row[0])
