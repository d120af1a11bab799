"""SQL for the review queue: what agents wrote, held until a person approves or rejects it."""

import json
from typing import Any

import msgspec
from msgspec import Struct

from contextd.models import RecordDraft
from contextd.storage.connection import Connection
from contextd.storage.filters import in_reach

__all__ = [
    "Held", "changes_to", "count_waiting", "decide", "hold", "kept", "remove",
    "replace_draft", "waiting",
]  # fmt: skip

_COLUMNS = (
    "id, project_id, developer, draft, supersedes, queued_at, state, reason, decided_at, "
    "request, target, payload"
)


class Held(Struct, frozen=True):
    """One draft in the queue: a new record, or (`request` other than "create") a change an
    agent asked for to the stored record `target`, with its arguments in `payload` and the
    record as the change would leave it in `draft`."""

    id: str
    project_id: str | None  # None: a global record
    developer: str
    draft: RecordDraft
    supersedes: tuple[str, ...]
    queued_at: str
    state: str  # pending | rejected
    reason: str | None = None
    decided_at: str | None = None
    request: str = "create"  # create | update | append | link | supersede | archive | delete
    target: str | None = None
    payload: dict[str, Any] = {}


def _held(row: tuple[object, ...]) -> Held:
    supersedes = json.loads(str(row[4]))
    return Held(
        str(row[0]),
        None if row[1] is None else str(row[1]),
        str(row[2]),
        msgspec.json.decode(str(row[3]), type=RecordDraft),
        tuple(str(s) for s in supersedes),
        str(row[5]),
        str(row[6]),
        None if row[7] is None else str(row[7]),
        None if row[8] is None else str(row[8]),
        str(row[9]),
        None if row[10] is None else str(row[10]),
        json.loads(str(row[11])),
    )


def hold(conn: Connection, held: Held) -> None:
    conn.execute(
        f"INSERT INTO review_queue({_COLUMNS}) "
        "VALUES (?, ?, ?, ?, ?, ?, 'pending', NULL, NULL, ?, ?, ?)",
        (
            held.id,
            held.project_id,
            held.developer,
            msgspec.json.encode(held.draft).decode("utf-8"),
            json.dumps(list(held.supersedes)),
            held.queued_at,
            held.request,
            held.target,
            json.dumps(held.payload),
        ),
    )


def _scope(project_id: str | None) -> tuple[str, list[object]]:
    return in_reach("review_queue", project_id)


def waiting(conn: Connection, project_id: str | None, developer: str | None) -> list[Held]:
    """The developer's pending drafts for the project (and global ones), oldest first; every
    developer's when `developer` is None (for whoever reviews them all)."""
    where, params = _scope(project_id)
    whose, who = _whose(developer)
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM review_queue WHERE {where}{whose} "
        "AND state = 'pending' ORDER BY queued_at, id",
        [*params, *who],
    ).fetchall()
    return [_held(r) for r in rows]


def kept(conn: Connection, project_id: str, developer: str) -> list[Held]:
    """The developer's drafts for the project, waiting or rejected, newest first."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM review_queue WHERE project_id = ? AND developer = ? "
        "ORDER BY queued_at DESC, id LIMIT 2000",
        (project_id, developer),
    ).fetchall()
    return [_held(r) for r in rows]


def changes_to(conn: Connection, record_id: str, developer: str) -> list[Held]:
    """The developer's pending changes to one stored record, oldest first."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM review_queue WHERE target = ? AND developer = ? "
        "AND state = 'pending' ORDER BY queued_at, id",
        (record_id, developer),
    ).fetchall()
    return [_held(r) for r in rows]


def count_waiting(conn: Connection, project_id: str | None, developer: str | None) -> int:
    """How many `waiting` would list."""
    where, params = _scope(project_id)
    whose, who = _whose(developer)
    row = conn.execute(
        f"SELECT count(*) FROM review_queue WHERE {where}{whose} AND state = 'pending'",
        [*params, *who],
    ).fetchone()
    return int(row[0])


def _whose(developer: str | None) -> tuple[str, list[object]]:
    return ("", []) if developer is None else (" AND developer = ?", [developer])


def replace_draft(conn: Connection, held_id: str, draft: RecordDraft) -> None:
    conn.execute(
        "UPDATE review_queue SET draft = ? WHERE id = ? AND state = 'pending'",
        (msgspec.json.encode(draft).decode("utf-8"), held_id),
    )


def decide(conn: Connection, held_id: str, reason: str, at: str) -> None:
    """Reject a draft: it stays, so the same proposal is known as rejected."""
    conn.execute(
        "UPDATE review_queue SET state = 'rejected', reason = ?, decided_at = ? WHERE id = ?",
        (reason, at, held_id),
    )


def remove(conn: Connection, held_id: str) -> None:
    conn.execute("DELETE FROM review_queue WHERE id = ?", (held_id,))
