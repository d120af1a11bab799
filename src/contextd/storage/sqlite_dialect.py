"""SQLite's spelling of what is not portable: json_each, `IS`, scalar max, and full-text
candidates from the FTS5 index ranked by bm25."""

from typing import TYPE_CHECKING, ClassVar

from contextd.storage.dialect import Dialect

if TYPE_CHECKING:
    from contextd.storage.connection import Connection
    from contextd.storage.records import RecordFilter

__all__ = ["SQLITE"]

_SMALL_STORE = 2000  # below this every word is kept: scoring all matches is cheap
_COMMON_SHARE = 0.25
# bm25 weights per indexed column: title, body_text, tags, retrieval_hints.
COLUMN_WEIGHTS = (4.0, 1.0, 2.0, 2.0)


class SqliteDialect(Dialect):
    name: ClassVar[str] = "sqlite"
    null_safe_eq: ClassVar[str] = "IS"
    # CROSS JOIN makes SQLite look each listed id up by its index instead of scanning.
    index_join: ClassVar[str] = "CROSS JOIN"

    def json_rows(self, source: str, alias: str) -> str:
        return f"json_each({source}) AS {alias}"

    def json_list_has(self, column: str) -> str:
        return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE value = ?)"

    def greatest(self, first: str, second: str) -> str:
        return f"max({first}, {second})"

    def fts_candidates(
        self, conn: "Connection", words: list[str], scope: "RecordFilter", limit: int
    ) -> list[tuple[str, float]]:
        where, params = scope.where(self, "r")
        weights = ", ".join(str(w) for w in COLUMN_WEIGHTS)
        sql = (
            f"SELECT r.id, bm25(records_fts, {weights}) AS rank "
            "FROM records_fts JOIN records AS r ON r.seq = records_fts.rowid "
            f"WHERE records_fts MATCH ? AND {where} ORDER BY rank LIMIT ?"
        )
        expression = or_expression(_selective(conn, words))
        rows = conn.execute(sql, (expression, *params, limit)).fetchall()
        return [(str(row[0]), -float(row[1])) for row in rows]


def or_expression(words: list[str]) -> str:
    """An FTS5 query: each word quoted (so no operator or stray quote can act), joined by OR."""
    return " OR ".join(f'"{w}"' for w in words)


def _selective(conn: "Connection", words: list[str]) -> list[str]:
    """Drop words found in most records: they barely move bm25 but make FTS5 score nearly
    every row. If every word is that common, the rarest one stays."""
    if len(words) < 2:
        return words
    total = conn.execute("SELECT count(*) FROM records").fetchone()[0]
    if total < _SMALL_STORE:
        return words
    counts = {
        w: conn.execute(
            "SELECT count(*) FROM records_fts WHERE records_fts MATCH ?", (or_expression([w]),)
        ).fetchone()[0]
        for w in words
    }
    kept = [w for w in words if counts[w] <= total * _COMMON_SHARE]
    return kept or [min(words, key=lambda w: counts[w])]


SQLITE = SqliteDialect()
