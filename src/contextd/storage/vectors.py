"""SQL for record vectors: float32 little-endian BLOBs tagged with provider, width and text hash."""

from collections.abc import Iterable

from msgspec import Struct

from contextd.storage.connection import Connection
from contextd.storage.filters import in_reach

__all__ = [
    "EmbeddingRow",
    "StoredVector",
    "VectorBlock",
    "VectorStats",
    "generation",
    "delete_embedding",
    "drop_other_models",
    "every_record_has_one",
    "load_vectors",
    "last_seq",
    "load_block",
    "missing_ids",
    "stored_hashes",
    "stored_passages",
    "upsert_embeddings",
    "vector_stats",
]


class EmbeddingRow(Struct, frozen=True):
    record_id: str
    provider: str
    text_hash: str
    vector: list[float]  # the record's start
    passages: bytes | None = None  # its later windows' vectors end to end (float32, little-endian)


class VectorStats(Struct, frozen=True):
    records: int
    current: int  # embedded with the given provider and width
    other: dict[str, int]  # "provider/dims" -> count of vectors made by something else


def upsert_embeddings(conn: Connection, rows: Iterable[EmbeddingRow], stamp: str) -> None:
    """Store vectors, replacing a record's old one (with a fresh seq, so readers notice)."""
    batch = list(rows)
    dialect = conn.dialect
    conn.executemany("DELETE FROM embeddings WHERE record_id = ?", [(r.record_id,) for r in batch])
    conn.executemany(  # a record deleted meanwhile simply gets no vector
        "INSERT INTO embeddings"
        "(record_id, provider, dimensions, text_hash, vector, passages, updated_at) "
        f"SELECT ?, ?, ?, ?, {dialect.vector_placeholder}, ?, ? "
        "WHERE EXISTS (SELECT 1 FROM records WHERE id = ?)",
        [
            (
                r.record_id,
                r.provider,
                len(r.vector),
                r.text_hash,
                dialect.vector_param(r.vector),
                r.passages,
                stamp,
                r.record_id,
            )
            for r in batch
        ],
    )


def stored_hashes(conn: Connection, provider: str, dimensions: int) -> dict[str, str]:
    """record id -> text hash of its vector made by this provider and width."""
    return {
        r[0]: r[1]
        for r in conn.execute(
            "SELECT record_id, text_hash FROM embeddings WHERE provider = ? AND dimensions = ?",
            (provider, dimensions),
        )
    }


def generation(conn: Connection) -> tuple[int, int]:
    """Changes whenever a vector is added, replaced or removed."""
    row = conn.execute("SELECT count(*), coalesce(max(seq), 0) FROM embeddings").fetchone()
    return int(row[0]), int(row[1])


class StoredVector(Struct, frozen=True):
    seq: int
    record_id: str
    project_id: str | None
    vector: bytes | None  # None for a vector of another provider or width
    passages: bytes | None = None  # its later windows' vectors, if it has any


def load_vectors(
    conn: Connection, provider: str, dimensions: int, after_seq: int = 0
) -> list[StoredVector]:
    """Vectors stored after `after_seq`, oldest first: those of this provider and width with
    their blob, every other one with None (a reader still needs to know it arrived)."""
    dialect = conn.dialect
    visible, shown = dialect.visible("records", "r")
    rows = conn.execute(
        "SELECT e.seq, e.record_id, r.project_id, "
        f"CASE WHEN e.provider = ? AND e.dimensions = ? THEN {dialect.vector_column('e.vector')} "
        "END, e.passages FROM embeddings AS e JOIN records AS r ON r.id = e.record_id "
        f"WHERE e.seq > ? AND {visible} ORDER BY e.seq",
        (provider, dimensions, after_seq, *shown),
    ).fetchall()  # one call: iterating a cursor row by row costs more than the rows
    return [
        StoredVector(int(r[0]), str(r[1]), r[2], dialect.vector_blob(r[3]), r[4] and _bytes(r[4]))
        if r[3] is not None
        else StoredVector(int(r[0]), str(r[1]), r[2], None)
        for r in rows
    ]


class VectorBlock(Struct, frozen=True):
    """Every vector of one provider and width, in one buffer (row i belongs to record i)."""

    record_ids: tuple[str, ...]
    project_ids: tuple[str | None, ...]
    data: bytes | bytearray  # the float32 little-endian vectors end to end
    passages: dict[int, bytes]  # row -> that record's later windows' vectors, for those with any


_BLOCK_ROWS = 512


def load_block(conn: Connection, provider: str, dimensions: int) -> VectorBlock:
    """All vectors of this provider and width, oldest first, read in one statement into one
    buffer: a first search loads 10k vectors in a third of the per-row time.

    A few hundred rows at a time, so each batch's blobs are freed before the next arrives:
    all 10k rows at once (fetchall) left ~15 MiB of freed blobs the allocator could not give
    back, pinned by the record ids kept from the same rows, for as long as the process ran.
    (Row by row through the translating cursor cost 30 ms more at 10k.)"""
    dialect = conn.dialect
    visible, shown = dialect.visible("records", "r")
    cursor = conn.execute(
        f"SELECT e.record_id, r.project_id, {dialect.vector_column('e.vector')}, e.passages "
        "FROM embeddings AS e JOIN records AS r ON r.id = e.record_id "
        f"WHERE e.provider = ? AND e.dimensions = ? AND {visible} ORDER BY e.seq",
        (provider, dimensions, *shown),
    )
    record_ids: list[str] = []
    project_ids: list[str | None] = []
    data = bytearray()
    passages: dict[int, bytes] = {}
    while rows := cursor.fetchmany(_BLOCK_ROWS):
        for record_id, project_id, blob, windows in rows:
            if windows:
                passages[len(record_ids)] = _bytes(windows)
            record_ids.append(record_id)
            project_ids.append(project_id)
            data += dialect.vector_blob(blob)
    return VectorBlock(tuple(record_ids), tuple(project_ids), data, passages)


def stored_passages(
    conn: Connection, provider: str, dimensions: int, record_ids: list[str]
) -> dict[str, bytes]:
    """The later windows' vectors of those given records that have any (this provider and
    width)."""
    if not record_ids:
        return {}
    found: dict[str, bytes] = {}
    for start in range(0, len(record_ids), _BLOCK_ROWS):
        wanted = record_ids[start : start + _BLOCK_ROWS]
        marks = ", ".join("?" * len(wanted))
        for record_id, windows in conn.execute(
            "SELECT record_id, passages FROM embeddings WHERE provider = ? AND dimensions = ? "
            f"AND passages IS NOT NULL AND record_id IN ({marks})",
            (provider, dimensions, *wanted),
        ):
            found[str(record_id)] = _bytes(windows)
    return found


def _bytes(value: bytes | memoryview) -> bytes:
    """A BLOB (SQLite) or BYTEA (PostgreSQL: bytes or a memoryview) as bytes."""
    return value if isinstance(value, bytes) else bytes(value)


def missing_ids(
    conn: Connection,
    provider: str,
    dimensions: int,
    project_id: str | None,
    limit: int,
    after_seq: int = 0,
) -> list[str]:
    """Records in the project's reach (its own, its group's, global ones) stored after
    `after_seq` without a vector of this provider and width (of those this connection's
    developer may see)."""
    visible, shown = conn.dialect.visible("records", "r")
    reach, reached = in_reach("r", project_id)
    return [
        str(r[0])
        for r in conn.execute(
            "SELECT r.id FROM records AS r LEFT JOIN embeddings AS e ON e.record_id = r.id "
            "AND e.provider = ? AND e.dimensions = ? WHERE r.seq > ? AND e.record_id IS NULL "
            f"AND {reach} AND {visible} LIMIT ?",
            (provider, dimensions, after_seq, *reached, *shown, limit),
        )
    ]


def every_record_has_one(conn: Connection, provider: str, dimensions: int) -> bool:
    """Whether every record has a vector of this provider and width: two counts, ~2 ms at 10k
    records, where listing the records without one (missing_ids) reads every record. Each
    vector belongs to one record (record_id is unique and references records), so equal
    counts mean none is missing."""
    stored = conn.execute(
        "SELECT count(*) FROM embeddings WHERE provider = ? AND dimensions = ?",
        (provider, dimensions),
    ).fetchone()[0]
    return int(stored) == int(conn.execute("SELECT count(*) FROM records").fetchone()[0])


def last_seq(conn: Connection) -> int:
    """The newest record's stable key (0 for an empty store)."""
    return int(conn.execute("SELECT coalesce(max(seq), 0) FROM records").fetchone()[0])


def delete_embedding(conn: Connection, record_id: str) -> None:
    conn.execute("DELETE FROM embeddings WHERE record_id = ?", (record_id,))


def drop_other_models(conn: Connection, provider: str, dimensions: int) -> None:
    """Forget vectors made by any other provider or width."""
    conn.execute(
        "DELETE FROM embeddings WHERE provider != ? OR dimensions != ?", (provider, dimensions)
    )


def vector_stats(conn: Connection, provider: str, dimensions: int) -> VectorStats:
    records = int(conn.execute("SELECT count(*) FROM records").fetchone()[0])
    other: dict[str, int] = {}
    current = 0
    for name, dims, count in conn.execute(
        "SELECT provider, dimensions, count(*) FROM embeddings GROUP BY provider, dimensions"
    ):
        if name == provider and dims == dimensions:
            current = int(count)
        else:
            other[f"{name}/{dims}"] = int(count)
    return VectorStats(records, current, other)
