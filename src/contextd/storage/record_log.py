"""SQL for each record's log: every change, who made it and through what, with the record as
it was before, written by the same statements that change the record (storage.records)."""

import msgspec
from msgspec import Struct
from msgspec.structs import replace

from contextd.models import Record, Status
from contextd.provenance import current_via
from contextd.storage.connection import Connection

__all__ = [
    "LogEntry", "RowFacts", "deletions_like", "entries_of", "event_of", "forget_deleted", "note",
    "relinked_at",
]  # fmt: skip

_COLUMNS = "record_id, at, event, actor, via, prior, handle, private"
_EVENTS = {
    (Status.ACTIVE, Status.SUPERSEDED): "superseded",
    (Status.SUPERSEDED, Status.ACTIVE): "unsuperseded",
}


class RowFacts(Struct, frozen=True):
    """What the records row holds beside the record: whose it is, its handle, whether it is
    kept out of repository files."""

    owner: str
    handle: str | None
    private: bool


class LogEntry(Struct, frozen=True):
    """One change of a record: when, what, by whom, through what, and the record before."""

    record_id: str
    at: str
    event: str  # created, restored, updated, relinked, verified, superseded, unsuperseded,
    # archived, unarchived, deleted
    actor: str  # the developer ('' in a home: its one person)
    via: str  # cli, mcp <client>, http <token>, web, hook, sync <peer>, import, ...
    prior: Record | None
    handle: str | None = None
    private: bool = False


def event_of(prior: Record | None, after: Record | None) -> str | None:
    """What changed between two states of a record; None when nothing a person sees did."""
    if prior is None:
        return "created"
    if after is None:
        return "deleted"
    if prior.status is not after.status:
        if after.status is Status.ARCHIVED:
            return "archived"
        if prior.status is Status.ARCHIVED:
            return "unarchived"
        return _EVENTS.get((prior.status, after.status), "updated")
    same = replace(after, updated_at=prior.updated_at, verified_at=prior.verified_at)
    if same == prior:
        return "verified" if after.verified_at != prior.verified_at else None
    if replace(same, related_to=prior.related_to) == prior:
        return "relinked"
    return "updated"


def note(
    conn: Connection, record_id: str, at: str, event: str, facts: RowFacts, prior: Record | None
) -> None:
    """Log one change (inside the transaction that makes it). A re-stamp keeps no copy."""
    kept = None if prior is None or event == "verified" else msgspec.json.encode(prior).decode()
    conn.execute(
        "INSERT INTO record_log(record_id, at, event, actor, via, owner, handle, private, prior) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            record_id,
            at,
            event,
            conn.dialect.developer,
            current_via(),
            facts.owner,
            facts.handle,
            int(facts.private),
            kept,
        ),
    )


def entries_of(conn: Connection, record_id: str) -> list[LogEntry]:
    """A record's log, oldest first, as far as this connection's developer may read it."""
    visible, shown = conn.dialect.visible("record_log")
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM record_log WHERE record_id = ? AND {visible} ORDER BY seq",
        (record_id, *shown),
    ).fetchall()
    return [_entry(row) for row in rows]


def deletions_like(conn: Connection, reference: str, is_prefix: bool) -> list[LogEntry]:
    """The latest deletion of each record gone now whose handle is `reference` (any letter
    case) or, when `is_prefix`, whose id begins with it; at most ten."""
    visible, shown = conn.dialect.visible("record_log")
    by_id = "(record_id >= ? AND record_id < ?)" if is_prefix else "1 = 0"
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM record_log WHERE seq IN ("
        "SELECT max(seq) FROM record_log "
        f"WHERE event = 'deleted' AND (handle = ? OR {by_id}) AND {visible} "
        "AND record_id NOT IN (SELECT id FROM records) GROUP BY record_id"
        ") ORDER BY seq DESC LIMIT 10",
        (reference.upper(), *((reference, reference + "\uffff") if is_prefix else ()), *shown),
    ).fetchall()
    return [_entry(row) for row in rows]


def relinked_at(conn: Connection, at: str, record_id: str) -> list[str]:
    """Records whose link to `record_id` a change at `at` moved or dropped (a supersede, a
    deletion): what undoing that change puts back."""
    rows = conn.execute(
        "SELECT record_id, prior FROM record_log WHERE event = 'relinked' AND at = ?", (at,)
    ).fetchall()
    return [
        str(rid)
        for rid, prior in rows
        if prior is not None
        and record_id in msgspec.json.decode(str(prior), type=Record).related_to
    ]


def _entry(row: tuple[object, ...]) -> LogEntry:
    return LogEntry(
        str(row[0]),
        str(row[1]),
        str(row[2]),
        str(row[3]),
        str(row[4]),
        None if row[5] is None else msgspec.json.decode(str(row[5]), type=Record),
        None if row[6] is None else str(row[6]),
        bool(row[7]),
    )


def forget_deleted(conn: Connection) -> int:
    """Drop the log of records that are gone for good (no row, no tombstone)."""
    cursor = conn.execute(
        "DELETE FROM record_log WHERE record_id NOT IN (SELECT id FROM records) "
        "AND record_id NOT IN (SELECT id FROM tombstones)"
    )
    return max(cursor.rowcount, 0)
