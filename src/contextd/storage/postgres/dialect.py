"""PostgreSQL's spelling of what is not portable: JSON lists through jsonb, GREATEST, and full
text through a tsvector of FTS5's own terms, ranked by the bm25 FTS5 computes."""

import math
from typing import TYPE_CHECKING, ClassVar

from contextd.storage.dialect import Dialect, IndexedText
from contextd.storage.postgres import terms
from contextd.storage.sqlite_dialect import COLUMN_WEIGHTS

if TYPE_CHECKING:
    from contextd.storage.connection import Connection
    from contextd.storage.records import RecordFilter

__all__ = ["POSTGRES", "PostgresDialect"]

# FTS5's bm25 constants and its rule for dropping words most records hold (sqlite_dialect.py).
_K1, _B = 1.2, 0.75
_SMALL_STORE = 2000
_COMMON_SHARE = 0.25
_WEIGHT = dict(zip("ABCD", COLUMN_WEIGHTS, strict=True))

_STATS = (
    "SELECT (SELECT count(*) FROM records), (SELECT coalesce(sum(fts_length), 0) FROM records), "
    "ARRAY(SELECT (SELECT count(*) FROM records WHERE fts @@ CAST(q.text AS tsquery)) "
    "FROM unnest(CAST(? AS text[])) WITH ORDINALITY AS q(text, n) ORDER BY q.n)"
)
_FREQUENCY = " ".join(f"WHEN '{label}' THEN {weight}" for label, weight in _WEIGHT.items())
_SCORED = (
    "SELECT r.id, sum(t.idf * (s.f * {k1plus}) / (s.f + {k1} * ({one_minus_b} + {b} * "
    "r.fts_length / ?))) AS score FROM records AS r "
    "CROSS JOIN LATERAL (SELECT u.lexeme, sum(CASE w " + _FREQUENCY + " END) AS f "
    "FROM unnest(r.fts) AS u, unnest(u.weights) AS w "
    "WHERE u.lexeme = ANY(CAST(? AS text[])) GROUP BY u.lexeme) AS s "
    "JOIN unnest(CAST(? AS text[]), CAST(? AS float8[])) AS t(lexeme, idf) "
    "ON t.lexeme = s.lexeme "
    "WHERE r.fts @@ CAST(? AS tsquery) AND {where} "
    "GROUP BY r.seq, r.id ORDER BY score DESC, r.seq LIMIT ?"
)


class PostgresDialect(Dialect):
    name: ClassVar[str] = "postgresql"
    null_safe_eq: ClassVar[str] = "IS NOT DISTINCT FROM"
    index_join: ClassVar[str] = "JOIN"
    vector_placeholder: ClassVar[str] = "CAST(? AS vector)"

    def json_rows(self, source: str, alias: str) -> str:
        return f"jsonb_array_elements_text(CAST({source} AS jsonb)) AS {alias}(value)"

    def json_list_has(self, column: str) -> str:
        return f"CAST({column} AS jsonb) @> jsonb_build_array(CAST(? AS text))"

    def greatest(self, first: str, second: str) -> str:
        return f"GREATEST({first}, {second})"

    def fts_columns(self, text: IndexedText) -> tuple[tuple[str, str, object], ...]:
        vector, length = terms.indexed_terms(text)
        return (("fts", "CAST(? AS tsvector)", vector), ("fts_length", "?", length))

    def fts_candidates(
        self, conn: "Connection", words: list[str], scope: "RecordFilter", limit: int
    ) -> list[tuple[str, float]]:
        wanted = list(dict.fromkeys(t for found in terms.word_terms(words) for t in found))
        if not wanted:
            return []
        total, tokens, hits = conn.execute(
            _STATS, ([terms.query_text([t]) for t in wanted],)
        ).fetchone()
        counts = dict(zip(wanted, (int(h) for h in hits), strict=True))
        kept = _selective(wanted, counts, int(total))
        idf = [_idf(int(total), counts[t]) for t in kept]
        average = float(tokens) / int(total) if total else 1.0
        where, params = scope.where(self, "r")
        sql = _SCORED.format(k1plus=_K1 + 1, k1=_K1, one_minus_b=1 - _B, b=_B, where=where)
        found = conn.execute(
            sql, (average or 1.0, kept, kept, idf, terms.query_text(kept), *params, limit)
        ).fetchall()
        return [(str(row[0]), float(row[1])) for row in found]

    def vector_param(self, vector: list[float]) -> object:
        return "[" + ",".join(repr(float(x)) for x in vector) + "]"

    def vector_column(self, expression: str) -> str:
        return f"CAST({expression} AS real[])"

    def vector_blob(self, value: object) -> bytes:
        from contextd.storage.vectors import encode

        assert isinstance(value, list)
        return encode(value)


def _selective(wanted: list[str], counts: dict[str, int], total: int) -> list[str]:
    """As in SQLite: in a large store, drop terms most records hold, keeping the rarest one
    when every term is that common."""
    if len(wanted) < 2 or total < _SMALL_STORE:
        return wanted
    kept = [t for t in wanted if counts[t] <= total * _COMMON_SHARE]
    return kept or [min(wanted, key=lambda t: counts[t])]


def _idf(total: int, hits: int) -> float:
    """FTS5's inverse document frequency, never below a tiny positive value."""
    value = math.log((total - hits + 0.5) / (hits + 0.5)) if total else 0.0
    return value if value > 0 else 1e-6


POSTGRES = PostgresDialect()
