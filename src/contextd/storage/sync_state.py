"""SQL for exchanging records between machines: store id, version history, tombstones,
conflicts and SSH remotes."""

import json
from collections.abc import Iterable, Sequence

from msgspec import Struct

from contextd.models import Record
from contextd.storage.connection import Connection
from contextd.storage.filters import in_reach
from contextd.storage.records import COLUMNS, record_from_row

__all__ = [
    "ConflictRow",
    "RemoteRow",
    "Tombstone",
    "add_versions",
    "delete_conflict",
    "delete_remote",
    "delete_tombstone",
    "export_records",
    "export_tombstones",
    "forget_tombstones",
    "get_remote",
    "tombstone_count",
    "tombstones_before",
    "insert_remote",
    "list_conflicts",
    "list_remotes",
    "store_id",
    "stamp_remote",
    "tombstones_of",
    "upsert_conflict",
    "upsert_tombstone",
    "versions_of",
]


class Tombstone(Struct, frozen=True):
    id: str
    project_id: str | None
    deleted_at: str


class ConflictRow(Struct, frozen=True):
    record_id: str
    peer: str
    local_updated_at: str
    remote_updated_at: str
    remote_record: str  # the other side's version, as bundle JSON
    detected_at: str


class RemoteRow(Struct, frozen=True):
    name: str
    target: str
    login_shell: bool
    command: str | None
    remote_home: str | None
    ssh_options: tuple[str, ...]
    store_id: str | None
    last_pull_at: str | None
    last_push_at: str | None
    created_at: str


def store_id(conn: Connection) -> str:
    """The id other stores know this one by."""
    return str(conn.execute("SELECT store_id FROM sync_store").fetchone()[0])


def export_records(conn: Connection, project_id: str | None, since: str | None) -> list[Record]:
    """Every record (of one project and its group when `project_id` is given), changed
    since `since`."""
    clauses, params = _scope(project_id, since, "records", "updated_at")
    visible, shown = conn.dialect.visible("records")
    sql = f"SELECT {COLUMNS} FROM records WHERE {clauses} AND {visible} ORDER BY created_at, id"
    return [record_from_row(row) for row in conn.execute(sql, [*params, *shown])]


def export_tombstones(
    conn: Connection, project_id: str | None, since: str | None
) -> list[Tombstone]:
    clauses, params = _scope(project_id, since, "tombstones", "deleted_at")
    sql = f"SELECT id, project_id, deleted_at FROM tombstones WHERE {clauses} ORDER BY id"
    return [Tombstone(*row) for row in conn.execute(sql, params)]


def _scope(
    project_id: str | None, since: str | None, table: str, stamp: str
) -> tuple[str, list[object]]:
    clauses: list[str] = ["1 = 1"]
    params: list[object] = []
    if project_id is not None:  # the project's own and its group's (not the global ones)
        reach, reached = in_reach(table, project_id)
        clauses.append(f"{reach} AND project_id IS NOT NULL")
        params.extend(reached)
    if since is not None:
        clauses.append(f"{stamp} >= ?")
        params.append(since)
    return " AND ".join(clauses), params


def tombstones_of(conn: Connection, ids: Sequence[str]) -> dict[str, str]:
    """deleted_at of those of `ids` that carry a tombstone."""
    rows = conn.execute(
        "SELECT id, deleted_at FROM tombstones "
        f"WHERE id IN (SELECT value FROM {conn.dialect.json_rows('?', 'wanted')})",
        (json.dumps(list(ids)),),
    )
    return {str(r[0]): str(r[1]) for r in rows}


def upsert_tombstone(conn: Connection, tombstone: Tombstone) -> None:
    """Keep the latest deletion date of a record."""
    conn.execute(
        "INSERT INTO tombstones(id, project_id, deleted_at) VALUES (?, ?, ?) "
        "ON CONFLICT(id) DO UPDATE SET deleted_at = "
        f"{conn.dialect.greatest('tombstones.deleted_at', 'excluded.deleted_at')}",
        (tombstone.id, tombstone.project_id, tombstone.deleted_at),
    )


def delete_tombstone(conn: Connection, record_id: str) -> None:
    conn.execute("DELETE FROM tombstones WHERE id = ?", (record_id,))


def forget_tombstones(conn: Connection, before: str) -> int:
    """Drop tombstones of deletions older than `before`; returns how many."""
    return conn.execute("DELETE FROM tombstones WHERE deleted_at < ?", (before,)).rowcount


def versions_of(conn: Connection, ids: Sequence[str]) -> dict[str, set[str]]:
    """The exchanged versions each of `ids` descends from (absent: never exchanged)."""
    found: dict[str, set[str]] = {}
    rows = conn.execute(
        "SELECT record_id, updated_at FROM sync_versions "
        f"WHERE record_id IN (SELECT value FROM {conn.dialect.json_rows('?', 'wanted')})",
        (json.dumps(list(ids)),),
    )
    for record_id, stamp in rows:
        found.setdefault(str(record_id), set()).add(str(stamp))
    return found


def add_versions(conn: Connection, pairs: Iterable[tuple[str, str]]) -> None:
    """Remember (record id, updated_at) pairs as exchanged."""
    conn.executemany(
        "INSERT INTO sync_versions(record_id, updated_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
        pairs,
    )


def upsert_conflict(conn: Connection, row: ConflictRow) -> None:
    conn.execute(
        "INSERT INTO sync_conflicts(record_id, peer, local_updated_at, remote_updated_at, "
        "remote_record, detected_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(record_id) DO UPDATE "
        "SET peer = excluded.peer, local_updated_at = excluded.local_updated_at, "
        "remote_updated_at = excluded.remote_updated_at, "
        "remote_record = excluded.remote_record, detected_at = excluded.detected_at",
        (
            row.record_id,
            row.peer,
            row.local_updated_at,
            row.remote_updated_at,
            row.remote_record,
            row.detected_at,
        ),
    )


def delete_conflict(conn: Connection, record_id: str) -> None:
    conn.execute("DELETE FROM sync_conflicts WHERE record_id = ?", (record_id,))


def list_conflicts(conn: Connection) -> list[ConflictRow]:
    rows = conn.execute(
        "SELECT record_id, peer, local_updated_at, remote_updated_at, remote_record, "
        "detected_at FROM sync_conflicts ORDER BY detected_at, record_id"
    )
    return [ConflictRow(*row) for row in rows]


_REMOTE_COLUMNS = (
    "name, target, login_shell, command, remote_home, ssh_options, store_id, last_pull_at, "
    "last_push_at, created_at"
)


def _remote(row: Sequence[object]) -> RemoteRow:
    name, target, login, command, home, options, peer, pulled, pushed, created = row
    return RemoteRow(
        str(name),
        str(target),
        bool(login),
        None if command is None else str(command),
        None if home is None else str(home),
        tuple(json.loads(str(options))),
        None if peer is None else str(peer),
        None if pulled is None else str(pulled),
        None if pushed is None else str(pushed),
        str(created),
    )


def insert_remote(conn: Connection, remote: RemoteRow) -> None:
    conn.execute(
        f"INSERT INTO sync_remotes({_REMOTE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            remote.name,
            remote.target,
            int(remote.login_shell),
            remote.command,
            remote.remote_home,
            json.dumps(list(remote.ssh_options)),
            remote.store_id,
            remote.last_pull_at,
            remote.last_push_at,
            remote.created_at,
        ),
    )


def get_remote(conn: Connection, name: str) -> RemoteRow | None:
    row = conn.execute(
        f"SELECT {_REMOTE_COLUMNS} FROM sync_remotes WHERE name = ?", (name,)
    ).fetchone()
    return _remote(row) if row else None


def list_remotes(conn: Connection) -> list[RemoteRow]:
    rows = conn.execute(f"SELECT {_REMOTE_COLUMNS} FROM sync_remotes ORDER BY name")
    return [_remote(row) for row in rows]


def delete_remote(conn: Connection, name: str) -> bool:
    return conn.execute("DELETE FROM sync_remotes WHERE name = ?", (name,)).rowcount > 0


def stamp_remote(conn: Connection, name: str, *, peer: str | None, column: str, stamp: str) -> None:
    """Record when `name` was last pulled from or pushed to, and the store id it answered with."""
    if column not in ("last_pull_at", "last_push_at"):
        raise ValueError(column)
    conn.execute(
        f"UPDATE sync_remotes SET {column} = ?, store_id = coalesce(?, store_id) WHERE name = ?",
        (stamp, peer, name),
    )


def tombstones_before(conn: Connection, before: str) -> int:
    """How many deletions are older than `before` (what forget_tombstones would drop)."""
    row = conn.execute("SELECT count(*) FROM tombstones WHERE deleted_at < ?", (before,))
    return int(row.fetchone()[0])


def tombstone_count(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM tombstones").fetchone()[0])
