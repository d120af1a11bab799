"""Nearest records by inner product through pgvector's HNSW index (one partial index per
vector width), and the stored vectors of given records.

The index orders by `<#>` (negative inner product) over `vector::vector(N)`: the exact
expression and the literal width must appear in the query for the planner to use it. The
vectors are unit length, so the score is the cosine SQLite's numpy scan computes.
"""

from contextd.storage.connection import Connection
from contextd.storage.dialect import Dialect
from contextd.storage.filters import in_reach

__all__ = [
    "MAX_INDEXED_WIDTH",
    "count_vectors",
    "ensure_index",
    "mean_vector",
    "nearest",
    "similarities",
    "stored_vectors",
]

MAX_INDEXED_WIDTH = 2000  # pgvector's HNSW limit for `vector`; wider ones are scanned exactly


def _typed(dimensions: int) -> str:
    return f"vector({int(dimensions)})"


def index_name(dimensions: int) -> str:
    return f"embeddings_hnsw_{int(dimensions)}"


def ensure_index(conn: Connection, dimensions: int) -> bool:
    """Create the HNSW index for this width when it is missing; False when there is none
    (too wide, or this role may not create it): searches then scan exactly."""
    if dimensions > MAX_INDEXED_WIDTH:
        return False
    name = index_name(dimensions)
    found = conn.execute("SELECT to_regclass(CAST(? AS text)) IS NOT NULL", (name,)).fetchone()
    if found and found[0]:
        return True
    conn.execute(
        f"CREATE INDEX IF NOT EXISTS {name} ON embeddings USING hnsw "
        f"((CAST(vector AS {_typed(dimensions)})) vector_ip_ops) "
        f"WHERE dimensions = {int(dimensions)}"
    )
    return True


def nearest(
    conn: Connection,
    dialect: Dialect,
    provider: str,
    query: list[float],
    project_id: str | None,
    limit: int,
) -> list[tuple[str, float]]:
    """Record ids in the project's reach (its own, its group's, global), most similar first."""
    width = len(query)
    typed = _typed(width)
    distance = f"CAST(e.vector AS {typed}) <#> CAST(? AS {typed})"
    visible, shown = dialect.visible("records", "r")
    reach, reached = in_reach("r", project_id)
    rows = conn.execute(
        f"SELECT e.record_id, -({distance}) FROM embeddings AS e "
        "JOIN records AS r ON r.id = e.record_id "
        f"WHERE e.dimensions = {width} AND e.provider = ? "
        f"AND {reach} AND {visible} "
        f"ORDER BY {distance} LIMIT ?",
        (
            dialect.vector_param(query),
            provider,
            *reached,
            *shown,
            dialect.vector_param(query),
            limit,
        ),
    ).fetchall()
    return [(str(rid), float(score)) for rid, score in rows]


def similarities(
    conn: Connection, dialect: Dialect, provider: str, query: list[float], ids: list[str]
) -> dict[str, float]:
    """Inner product of the query with each given record's vector of this provider."""
    if not ids:
        return {}
    typed = _typed(len(query))
    rows = conn.execute(
        f"SELECT record_id, -(CAST(vector AS {typed}) <#> CAST(? AS {typed})) "
        f"FROM embeddings WHERE dimensions = {len(query)} AND provider = ? "
        f"AND record_id IN (SELECT value FROM {dialect.json_rows('?', 'wanted')})",
        (dialect.vector_param(query), provider, _json(ids)),
    ).fetchall()
    return {str(rid): float(score) for rid, score in rows}


def stored_vectors(
    conn: Connection, dialect: Dialect, provider: str, dimensions: int, ids: list[str]
) -> dict[str, list[float]]:
    """The stored vectors of the given records, made by this provider at this width."""
    if not ids:
        return {}
    rows = conn.execute(
        f"SELECT record_id, {dialect.vector_column('vector')} FROM embeddings "
        "WHERE dimensions = ? AND provider = ? "
        f"AND record_id IN (SELECT value FROM {dialect.json_rows('?', 'wanted')})",
        (dimensions, provider, _json(ids)),
    ).fetchall()
    return {str(rid): [float(x) for x in vector] for rid, vector in rows}


def mean_vector(
    conn: Connection, dialect: Dialect, provider: str, dimensions: int, project_id: str | None
) -> tuple[list[float], int] | None:
    """The mean of the vectors in the project's reach (pgvector's avg) and how many there
    are; None when there are none."""
    typed = _typed(dimensions)
    visible, shown = dialect.visible("records", "r")
    reach, reached = in_reach("r", project_id)
    row = conn.execute(
        f"SELECT CAST(avg(CAST(e.vector AS {typed})) AS real[]), count(*) FROM embeddings AS e "
        "JOIN records AS r ON r.id = e.record_id "
        f"WHERE e.dimensions = {int(dimensions)} AND e.provider = ? AND {reach} AND {visible}",
        (provider, *reached, *shown),
    ).fetchone()
    if row is None or row[0] is None:
        return None
    return [float(x) for x in row[0]], int(row[1])


def count_vectors(conn: Connection, provider: str, dimensions: int) -> int:
    """How many vectors the server holds of this model and width."""
    row = conn.execute(
        "SELECT count(*) FROM embeddings WHERE provider = ? AND dimensions = ?",
        (provider, dimensions),
    ).fetchone()
    return int(row[0])


def _json(ids: list[str]) -> str:
    import json

    return json.dumps(ids)
