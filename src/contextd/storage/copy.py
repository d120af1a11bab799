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

# Every table, parents before children, with the columns both backends share. A table a
# migration adds must be listed here (tests/postgres/test_copy.py checks the schema).
TABLES: dict[str, tuple[str, ...]] = {
    "projects": ("id", "slug", "name", "git_remote", "created_at", "updated_at", "is_group"),
    "project_paths": ("path", "project_id", "attached_at"),
    "group_members": ("project_id", "group_id", "joined_at"),
    "sessions": (
        "id", "project_id", "agent", "started_at", "ended_at", "summary", "developer",
    ),
    "records": (
        "id", "project_id", "kind", "category", "title", "body", "body_text", "tags",
        "retrieval_hints", "origin", "priority", "status", "superseded_by", "related_to",
        "session_id", "created_at", "updated_at", "verified_at", "archived_reason", "shared",
        "file_digest", "owner", "handle",
    ),
    "record_handles": ("kind", "last"),
    "tombstones": ("id", "project_id", "deleted_at"),
    "embeddings": (
        "record_id", "provider", "dimensions", "text_hash", "vector", "passages", "updated_at",
    ),
    "feedback": ("project_id", "record_id", "query", "provider", "vector", "created_at"),
    "agent_files": ("project_id", "path", "target", "sha256", "written_at"),
    "sync_versions": ("record_id", "updated_at"),
    "sync_conflicts": (
        "record_id", "peer", "local_updated_at", "remote_updated_at", "remote_record",
        "detected_at",
    ),
    "sync_remotes": (
        "name", "target", "login_shell", "command", "remote_home", "ssh_options", "store_id",
        "last_pull_at", "last_push_at", "created_at",
    ),
    "hook_shown": ("session_key", "record_id", "via", "shown_at"),
    "compaction_snapshots": (
        "id", "session_key", "project_id", "taken_at", "trigger", "record_ids",
        "quality_issues", "report", "reported_at",
    ),
    "shared_files": ("checkout", "name", "size", "mtime_ns", "digest", "record_id", "problem"),
    "code_changes": (
        "record_id", "commit_sha", "committed_at", "subject", "path", "change",
    ),
    "code_checks": ("project_id", "head", "renames", "checked_at"),
    "capture_sessions": (
        "session_key", "project_id", "developer", "started_at", "seen_at", "root", "start_head",
        "start_dirty", "asked_at", "ended_at", "checkpoint_id",
    ),
    "review_queue": (
        "id", "project_id", "developer", "draft", "supersedes", "queued_at", "state", "reason",
        "decided_at", "request", "target", "payload",
    ),
    "record_log": ("record_id", "at", "event", "actor", "via", "owner", "prior"),
    "http_tokens": (
        "name", "lookup", "secret_hash", "read_only", "project", "created_at", "expires_at",
        "revoked_at", "used_at", "window_start", "window_count",
    ),
}  # fmt: skip
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
        for table, columns in TABLES.items():
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
        extra = writing.full_text.indexed_columns(("", "", "", ""))
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
