"""Copying a whole store into an empty one, table by table, in one transaction of the target:
from the home's SQLite file to a team server, or back. Rows keep their ids, timestamps and
JSON text; keys a database assigns itself (seq) are assigned anew, in the same order; vectors
cross as float32; the target takes the source's store id, so peers know it as the same store.

What crosses is what the copying developer may see (from a team server: the team's records
and their own, their own sessions); the sessions and personal records become the target's
developer's (on a server, the role that copies in; in a home, its one developer).
"""

from collections.abc import Callable
from typing import cast

from contextd.errors import ConflictError
from contextd.storage import owners
from contextd.storage.connection import Connection
from contextd.storage.store import Database

__all__ = ["TABLES", "copy_store"]

# Every table, parents before children (tests/postgres/test_schema.py checks the schema holds
# no other). What is copied of each is read from the two databases: the columns both have, so a
# column a migration adds crosses without being listed anywhere.
TABLES: tuple[str, ...] = (
    "projects", "project_paths", "group_members", "sessions", "records", "record_handles",
    "tombstones", "embeddings", "feedback", "agent_files", "sync_versions", "sync_conflicts",
    "sync_remotes", "hook_shown", "compaction_snapshots", "shared_files", "code_changes",
    "code_checks", "capture_sessions", "review_queue", "record_log", "http_tokens",
)  # fmt: skip
# Tables whose rows a database numbers itself: read in that order, numbered anew.
_NUMBERED = {"records", "embeddings", "feedback", "record_log"}
# Tables whose rows belong to a record: copied when that record is.
_OF_A_RECORD = {
    "embeddings", "feedback", "sync_versions", "sync_conflicts", "hook_shown", "shared_files",
    "code_changes",
}  # fmt: skip
# Tables whose rows are one developer's (a `developer` column): what the copier may take, and
# theirs in the target.
_PERSONAL = ("sessions", "capture_sessions", "review_queue")
_BATCH = 500
_NO_TEXT = ("", "", "", "")  # what asks a full-text index for its column names


def copy_store(
    source: Database, target: Database, progress: Callable[[str, int], None] | None = None
) -> dict[str, int]:
    """Copy every row of `source` into `target`, which must hold no project or record; all
    or nothing. Returns the rows copied per table.

    Raises:
        ConflictError: the target already holds a store's data.
        StoreError: either database failed (nothing was written to the target).
    """
    counts: dict[str, int] = {}
    with source.snapshot() as reading, target.transaction() as writing:
        _refuse_filled(writing, target)
        sessions: set[str] = set()
        for table in TABLES:
            columns = _shared_columns(reading, writing, table)
            counts[table] = _copy_table(reading, writing, table, columns, sessions)
            if progress:
                progress(table, counts[table])
        store_id = reading.execute("SELECT store_id FROM sync_store").fetchone()[0]
        writing.execute("UPDATE sync_store SET store_id = ?", (store_id,))
    return counts


def _refuse_filled(conn: Connection, target: Database) -> None:
    found = conn.execute(
        "SELECT (SELECT count(*) FROM projects) + (SELECT count(*) FROM records)"
    ).fetchone()[0]
    if found:
        raise ConflictError(
            f"{target.path} already holds a contextd store ({found} projects and records); "
            "copy into an empty database or a new file."
        )


def _shared_columns(reading: Connection, writing: Connection, table: str) -> tuple[str, ...]:
    """The columns of `table` both stores keep, in the source's order: not `seq` (numbered
    anew) nor the target's own full-text columns (computed as the rows go in)."""
    target = set(_columns(writing, table))
    computed = {"seq", *(name for name, _, _ in writing.full_text.indexed_columns(_NO_TEXT))}
    return tuple(c for c in _columns(reading, table) if c in target and c not in computed)


def _columns(conn: Connection, table: str) -> list[str]:
    sql, params = conn.dialect.column_names(table)
    return [str(row[0]) for row in conn.execute(sql, params).fetchall()]


def _copy_table(
    reading: Connection,
    writing: Connection,
    table: str,
    columns: tuple[str, ...],
    sessions: set[str],
) -> int:
    source, target = reading.dialect, writing.dialect
    selected = [source.vector_column(c) if _is_vector(table, c) else c for c in columns]
    order = " ORDER BY seq" if table in _NUMBERED else ""
    where, shown = _seen(reading, table)
    rows = reading.execute(
        f"SELECT {', '.join(selected)} FROM {table} WHERE {where}{order}", shown
    ).fetchall()
    if table == "sessions":
        sessions.update(str(row[0]) for row in rows)
    marks = [target.vector_placeholder if _is_vector(table, c) else "?" for c in columns]
    names = list(columns)
    if table == "records":  # the target's own full-text columns, if it keeps any
        extra = writing.full_text.indexed_columns(_NO_TEXT)
        names += [name for name, _, _ in extra]
        marks += [mark for _, mark, _ in extra]
    sql = f"INSERT INTO {table}({', '.join(names)}) VALUES ({', '.join(marks)})"
    converted = [_converted(table, columns, row, reading, writing, sessions) for row in rows]
    for start in range(0, len(converted), _BATCH):
        writing.executemany(sql, converted[start : start + _BATCH])
    return len(rows)


def _seen(reading: Connection, table: str) -> tuple[str, tuple[object, ...]]:
    """Which rows of `table` the copying developer may take."""
    dialect = reading.dialect
    if table in ("records", "record_log", *_PERSONAL):
        return dialect.visible(table)
    if table in _OF_A_RECORD:
        visible, shown = dialect.visible("records", "r")
        own = f"record_id IN (SELECT r.id FROM records AS r WHERE {visible})"
        return (f"(record_id IS NULL OR {own})" if table == "shared_files" else own), shown
    return "1 = 1", ()


def _is_vector(table: str, column: str) -> bool:
    return table == "embeddings" and column == "vector"


def _converted(
    table: str,
    columns: tuple[str, ...],
    row: tuple[object, ...],
    reading: Connection,
    writing: Connection,
    sessions: set[str],
) -> tuple[object, ...]:
    values = list(row)
    target = writing.dialect
    if table in _PERSONAL:
        values[columns.index("developer")] = target.developer
    if table == "embeddings":
        from contextd.storage.vector_bytes import decode

        at = columns.index("vector")
        values[at] = writing.dialect.vector_param(decode(reading.dialect.vector_blob(row[at])))
        windows = row[columns.index("passages")]
        values[columns.index("passages")] = windows and bytes(cast(bytes, windows))
    if table == "record_log":  # as private as the record it logs is in the target
        owned = writing.execute(
            "SELECT owner FROM records WHERE id = ?", (row[columns.index("record_id")],)
        ).fetchone()
        values[columns.index("owner")] = owned[0] if owned else target.developer
    if table == "records":
        by_name = dict(zip(columns, row, strict=True))
        if by_name["session_id"] not in sessions:  # another developer's, not copied
            values[columns.index("session_id")] = None
        mine = by_name["owner"] != "" or by_name["shared"] == 2
        values[columns.index("owner")] = owners.owner_of(
            target, by_name["kind"], by_name["project_id"], by_name["category"], mine
        )
        text = (
            str(by_name["title"]),
            str(by_name["body_text"]),
            str(by_name["tags"]),
            str(by_name["retrieval_hints"]),
        )
        values += [value for _, _, value in writing.full_text.indexed_columns(text)]
    return tuple(values)
