"""Full text on the team server: a tsvector of FTS5's own terms per record (postgres/terms.py),
ranked by the bm25 FTS5 computes, with the embedded store's rule for dropping the words most
records hold, so both stores rank alike."""

from contextd.storage.cursor import Executor
from contextd.storage.fulltext import (
    COLUMN_WEIGHTS,
    COMMON_SHARE,
    SMALL_STORE,
    FullText,
    IndexedText,
    LexicalMatches,
    idf,
)
from contextd.storage.postgres import terms

__all__ = ["TSVECTOR", "TsVector"]

# FTS5's bm25 constants and its rule for dropping words most records hold (sqlite_dialect.py).
_K1, _B = 1.2, 0.75
_SMALL_STORE = 2000
_COMMON_SHARE = 0.25

# A term's frequency in a record, each occurrence weighted by its column (FTS5's bm25 weights),
# read by ts_rank_cd in C: for a one-term query every occurrence is a cover of its own and
# counts its weight. Weights go in D, C, B, A order (hints, tags, body, title) and may not
# exceed 1, hence the scale.
_SCALE = max(COLUMN_WEIGHTS)
_RANK_WEIGHTS = "{" + ",".join(str(w / _SCALE) for w in reversed(COLUMN_WEIGHTS)) + "}"
_FREQUENCY = f"{_SCALE} * ts_rank_cd('{_RANK_WEIGHTS}', r.fts, t.query, 0)".replace(
    "{", "{{"
).replace("}", "}}")  # literal braces in the statement template below
# One statement, one round trip: the store's totals and each term's document count, the terms
# kept (in a large store, those most records hold are dropped unless every one is: then the
# rarest stays, as FTS5 does in sqlite_dialect.py), their IDF, and every matching record in
# scope scored by FTS5's bm25.
_CANDIDATES = (
    "WITH wanted(lexeme, n) AS (SELECT * FROM unnest(CAST(? AS text[])) WITH ORDINALITY), "
    "totals AS MATERIALIZED (SELECT count(*) AS total, coalesce(sum(fts_length), 0) AS tokens "
    "  FROM records), "
    "hits AS MATERIALIZED (SELECT w.lexeme, w.n, (SELECT count(*) FROM records "
    "  WHERE fts @@ CAST(quote_literal(w.lexeme) AS tsquery)) AS hits FROM wanted AS w), "
    "common AS MATERIALIZED (SELECT h.lexeme, h.n, h.hits, h.hits > t.total * {common} "
    "  AND t.total >= {small} AND (SELECT count(*) FROM wanted) > 1 AS dropped "
    "  FROM hits AS h, totals AS t), "
    "kept AS (SELECT lexeme, hits FROM common WHERE NOT dropped UNION ALL "
    "  SELECT lexeme, hits FROM (SELECT lexeme, hits FROM common ORDER BY hits, n LIMIT 1) "
    "  AS rarest WHERE NOT EXISTS (SELECT 1 FROM common WHERE NOT dropped)), "
    "terms AS MATERIALIZED (SELECT CAST(quote_literal(k.lexeme) AS tsquery) AS query, "
    "  GREATEST(ln((t.total - k.hits + 0.5) / (k.hits + 0.5)), 1e-6) AS idf "
    "  FROM kept AS k, totals AS t), "
    "average AS MATERIALIZED (SELECT GREATEST(tokens, 1) / GREATEST(total, 1)::float8 AS dl "
    "  FROM totals) "
    "SELECT r.id, (SELECT sum(t.idf * f * {k1plus} / (f + {k1} * ({one_minus_b} + {b} * "
    "  r.fts_length / (SELECT dl FROM average)))) "
    "  FROM terms AS t CROSS JOIN LATERAL (VALUES (" + _FREQUENCY + ")) AS s(f)) AS score "
    "FROM records AS r "
    "WHERE r.fts @@ (SELECT CAST(string_agg(CAST(query AS text), ' | ') AS tsquery) "
    "  FROM terms) AND {where} "
    "ORDER BY score DESC, r.seq LIMIT ?"
)


class TsVector(FullText):
    """The records table's `fts` tsvector and `fts_length`, written with each row."""

    def indexed_columns(self, text: IndexedText) -> tuple[tuple[str, str, object], ...]:
        vector, length = terms.indexed_terms(text)
        return (("fts", "CAST(? AS tsvector)", vector), ("fts_length", "?", length))

    def matches(
        self,
        conn: Executor,
        words: list[str],
        scope: tuple[str, list[object]],
        limit: int,
        *,
        narrow: bool = False,
    ) -> LexicalMatches:
        per_word = terms.word_terms(words)
        hits = self._candidates(conn, per_word, scope, limit)
        if not hits:
            return LexicalMatches([], 0.0, {})
        coverage, rarity = _coverage(conn, dict(zip(words, per_word, strict=True)), hits[0][0])
        return LexicalMatches(hits, coverage, rarity)

    def _candidates(
        self, conn: Executor, per_word: list[list[str]], scope: tuple[str, list[object]], limit: int
    ) -> list[tuple[str, float]]:
        wanted = list(dict.fromkeys(t for found in per_word for t in found))
        if not wanted:
            return []
        where, params = scope
        sql = _CANDIDATES.format(
            common=COMMON_SHARE,
            small=SMALL_STORE,
            k1plus=_K1 + 1,
            k1=_K1,
            one_minus_b=1 - _B,
            b=_B,
            where=where,
        )
        found = conn.execute(sql, (wanted, *params, limit)).fetchall()
        return [(str(row[0]), float(row[1])) for row in found]


def _coverage(
    conn: Executor, per_word: dict[str, list[str]], best_id: str
) -> tuple[float, dict[str, float]]:
    """The idf-weighted share of the query's words the best hit holds (as the embedded store
    computes it), and each word's idf: each word's document count and its presence in that
    record, one query."""
    queries = {w: " | ".join(terms.quoted(t) for t in found) for w, found in per_word.items()}
    queries = {w: query for w, query in queries.items() if query}
    if not queries:
        return 0.0, {}
    row = conn.execute("SELECT count(*) FROM records", ()).fetchone()
    total = int(row[0])
    held = weight = 0.0
    rarity = {}
    for word, query in queries.items():
        counted = conn.execute(
            "SELECT count(*), bool_or(id = CAST(? AS text)) FROM records "
            "WHERE fts @@ CAST(? AS tsquery)",
            (best_id, query),
        ).fetchone()
        records, present = int(counted[0]), bool(counted[1])
        rarity[word] = idf(total, records)
        weight += rarity[word]
        held += rarity[word] if present else 0.0
    return (held / weight if weight > 0 else 0.0), rarity


TSVECTOR = TsVector()
