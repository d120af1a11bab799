"""SQL for what the hooks showed each agent session, and the pre-compaction snapshots."""

import json
from typing import Any

from msgspec import Struct

from contextd.storage.connection import Connection

__all__ = [
    "Snapshot",
    "add_shown",
    "first_shown_at",
    "forget_shown_before",
    "insert_snapshot",
    "latest_snapshot",
    "save_report",
    "shown_ids",
]


class Snapshot(Struct, frozen=True):
    """What a session had been given before a compaction, and the report once compared."""

    id: str
    session_key: str
    project_id: str
    taken_at: str
    trigger: str
    record_ids: tuple[str, ...]
    quality_issues: int
    report: dict[str, Any] | None
    reported_at: str | None


def add_shown(conn: Connection, session_key: str, record_ids: list[str], via: str, at: str) -> None:
    # A record given again keeps the latest time: a compaction report compares against it.
    conn.executemany(
        "INSERT INTO hook_shown(session_key, record_id, via, shown_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(session_key, record_id, via) DO UPDATE SET shown_at = excluded.shown_at",
        [(session_key, rid, via, at) for rid in record_ids],
    )


def shown_ids(
    conn: Connection, session_key: str, *, via: str | None = None, after: str = ""
) -> list[str]:
    """Record ids shown to the session (by one route, or any), later than `after`: a record
    shown in the same millisecond as a snapshot was taken was shown before it."""
    sql = "SELECT record_id FROM hook_shown WHERE session_key = ? AND shown_at > ?"
    params: list[object] = [session_key, after]
    if via is not None:
        sql += " AND via = ?"
        params.append(via)
    sql += " GROUP BY record_id ORDER BY min(shown_at), record_id"
    return [row[0] for row in conn.execute(sql, params)]


def first_shown_at(conn: Connection, session_key: str) -> str | None:
    row = conn.execute(
        "SELECT min(shown_at) FROM hook_shown WHERE session_key = ?", (session_key,)
    ).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def forget_shown_before(conn: Connection, cutoff: str) -> None:
    conn.execute("DELETE FROM hook_shown WHERE shown_at < ?", (cutoff,))


def insert_snapshot(conn: Connection, snapshot: Snapshot) -> None:
    conn.execute(
        "INSERT INTO compaction_snapshots(id, session_key, project_id, taken_at, trigger, "
        "record_ids, quality_issues) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            snapshot.id,
            snapshot.session_key,
            snapshot.project_id,
            snapshot.taken_at,
            snapshot.trigger,
            json.dumps(list(snapshot.record_ids)),
            snapshot.quality_issues,
        ),
    )


def latest_snapshot(
    conn: Connection, project_id: str, session_key: str | None = None
) -> Snapshot | None:
    sql = (
        "SELECT id, session_key, project_id, taken_at, trigger, record_ids, quality_issues, "
        "report, reported_at FROM compaction_snapshots WHERE project_id = ?"
    )
    params: list[object] = [project_id]
    if session_key is not None:
        sql += " AND session_key = ?"
        params.append(session_key)
    row = conn.execute(sql + " ORDER BY taken_at DESC, id DESC LIMIT 1", params).fetchone()
    if row is None:
        return None
    return Snapshot(
        str(row[0]),
        str(row[1]),
        str(row[2]),
        str(row[3]),
        str(row[4]),
        tuple(json.loads(row[5])),
        int(row[6]),
        None if row[7] is None else json.loads(row[7]),
        None if row[8] is None else str(row[8]),
    )


def save_report(conn: Connection, snapshot_id: str, report: dict[str, Any], at: str) -> None:
    conn.execute(
        "UPDATE compaction_snapshots SET report = ?, reported_at = ? WHERE id = ?",
        (json.dumps(report, ensure_ascii=False), at, snapshot_id),
    )
