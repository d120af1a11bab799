"""PostgreSQL's spelling of what is not portable: JSON lists through jsonb, GREATEST, and full
text through a tsvector of FTS5's own terms, ranked by the bm25 FTS5 computes."""

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

_FREQUENCY = " ".join(f"WHEN '{label}' THEN {weight}" for label, weight in _WEIGHT.items())
# One statement, one round trip: the store's totals and each term's document count, the terms
# kept (in a large store, those most records hold are dropped unless every one is: then the
# rarest stays, as FTS5 does in sqlite_dialect.py), their IDF, and every matching record in
# scope scored by FTS5's bm25 (a term's frequency in a record summed over the columns,
# weighted by column).
_CANDIDATES = (
    "WITH wanted(lexeme, n) AS (SELECT * FROM unnest(CAST(? AS text[])) WITH ORDINALITY), "
    "totals AS (SELECT count(*) AS total, coalesce(sum(fts_length), 0) AS tokens FROM records), "
    "hits AS (SELECT w.lexeme, w.n, (SELECT count(*) FROM records "
    "  WHERE fts @@ CAST(quote_literal(w.lexeme) AS tsquery)) AS hits FROM wanted AS w), "
    "common AS (SELECT h.lexeme, h.hits > t.total * {common} AND t.total >= {small} "
    "  AND (SELECT count(*) FROM wanted) > 1 AS dropped, h.n, h.hits FROM hits AS h, totals AS t), "
    "kept AS (SELECT lexeme, hits FROM common WHERE NOT dropped UNION ALL "
    "  SELECT lexeme, hits FROM (SELECT lexeme, hits FROM common ORDER BY hits, n LIMIT 1) "
    "  AS rarest WHERE NOT EXISTS (SELECT 1 FROM common WHERE NOT dropped)), "
    "terms AS (SELECT k.lexeme, GREATEST(ln((t.total - k.hits + 0.5) / (k.hits + 0.5)), 1e-6) "
    "  AS idf FROM kept AS k, totals AS t), "
    "matching AS (SELECT CAST(string_agg(quote_literal(lexeme), ' | ') AS tsquery) AS query "
    "  FROM terms) "
    "SELECT r.id, sum(t.idf * (s.f * {k1plus}) / (s.f + {k1} * ({one_minus_b} + {b} * "
    "  r.fts_length / (SELECT GREATEST(tokens, 1) / GREATEST(total, 1)::float8 FROM totals)))) "
    "  AS score "
    "FROM records AS r "
    "CROSS JOIN LATERAL (SELECT u.lexeme, sum(CASE w " + _FREQUENCY + " END) AS f "
    "  FROM unnest(r.fts) AS u, unnest(u.weights) AS w "
    "  WHERE u.lexeme IN (SELECT lexeme FROM terms) GROUP BY u.lexeme) AS s "
    "JOIN terms AS t ON t.lexeme = s.lexeme "
    "WHERE r.fts @@ (SELECT query FROM matching) AND {where} "
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
        where, params = scope.where(self, "r")
        sql = _CANDIDATES.format(
            common=_COMMON_SHARE,
            small=_SMALL_STORE,
            k1plus=_K1 + 1,
            k1=_K1,
            one_minus_b=1 - _B,
            b=_B,
            where=where,
        )
        found = conn.execute(sql, (wanted, *params, limit)).fetchall()
        return [(str(row[0]), float(row[1])) for row in found]

    def vector_param(self, vector: list[float]) -> object:
        return "[" + ",".join(repr(float(x)) for x in vector) + "]"

    def vector_column(self, expression: str) -> str:
        return f"CAST({expression} AS real[])"

    def vector_blob(self, value: object) -> bytes:
        from contextd.storage.vectors import encode

        assert isinstance(value, list)
        return encode(value)


POSTGRES = PostgresDialect()
