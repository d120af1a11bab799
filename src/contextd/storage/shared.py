"""SQL for shared records: the record files each checkout holds, and the records they hold."""

from msgspec import Struct

from contextd.storage.connection import Connection

__all__ = [
    "FileRow",
    "drop_files",
    "files_of",
    "has_files",
    "local_records",
    "mark_private",
    "mark_shared",
    "sharing_of",
    "put_file",
]


class FileRow(Struct, frozen=True):
    """A record file of a checkout as last read."""

    name: str
    size: int
    mtime_ns: int
    digest: str
    record_id: str | None
    problem: str | None


def files_of(conn: Connection, checkout: str) -> dict[str, FileRow]:
    rows = conn.execute(
        "SELECT name, size, mtime_ns, digest, record_id, problem FROM shared_files "
        "WHERE checkout = ?",
        (checkout,),
    )
    return {row[0]: FileRow(*row) for row in rows}


def put_file(conn: Connection, checkout: str, row: FileRow) -> None:
    conn.execute(
        "INSERT INTO shared_files(checkout, name, size, mtime_ns, digest, record_id, problem) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(checkout, name) DO UPDATE SET "
        "size = excluded.size, mtime_ns = excluded.mtime_ns, digest = excluded.digest, "
        "record_id = excluded.record_id, problem = excluded.problem",
        (checkout, row.name, row.size, row.mtime_ns, row.digest, row.record_id, row.problem),
    )


def has_files(conn: Connection, checkout: str) -> bool:
    row = conn.execute("SELECT 1 FROM shared_files WHERE checkout = ? LIMIT 1", (checkout,))
    return row.fetchone() is not None


def drop_files(conn: Connection, checkout: str, names: list[str]) -> None:
    conn.executemany(
        "DELETE FROM shared_files WHERE checkout = ? AND name = ?",
        [(checkout, name) for name in names],
    )


LOCAL, SHARED, PRIVATE = 0, 1, 2


def mark_shared(conn: Connection, record_id: str, digest: str) -> None:
    conn.execute("UPDATE records SET shared = 1, file_digest = ? WHERE id = ?", (digest, record_id))


def mark_private(conn: Connection, record_id: str) -> None:
    conn.execute("UPDATE records SET shared = 2 WHERE id = ?", (record_id,))


def sharing_of(conn: Connection, record_id: str) -> tuple[int, str | None]:
    """(LOCAL, SHARED or PRIVATE, the digest of its file) of a stored record."""
    row = conn.execute(
        "SELECT shared, file_digest FROM records WHERE id = ?", (record_id,)
    ).fetchone()
    return (int(row[0]), row[1]) if row else (LOCAL, None)


def local_records(conn: Connection, project_id: str) -> list[str]:
    """Ids of the project's records not yet shared nor private, oldest first (a developer's
    personal record, on a team server, is never shared)."""
    return [
        row[0]
        for row in conn.execute(
            "SELECT id FROM records WHERE project_id = ? AND shared = 0 AND owner = '' "
            "ORDER BY seq",
            (project_id,),
        )
    ]
