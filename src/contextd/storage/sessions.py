"""SQL for sessions: one stretch of work by one agent on one project, at most one open per
developer (a home's store has one developer, ''; a team server has many, and each sees,
lists and ends only their own)."""

import json
from collections.abc import Iterable

from msgspec import Struct

from contextd.models import Record
from contextd.storage.connection import Connection
from contextd.storage.records import COLUMNS as RECORD_COLUMNS
from contextd.storage.records import record_from_row

__all__ = [
    "SessionRow",
    "close_open",
    "end_session",
    "get_session",
    "insert_session",
    "latest_session",
    "list_sessions",
    "open_session",
    "open_sessions",
    "records_of_session",
]


class SessionRow(Struct, frozen=True):
    id: str
    project_id: str
    agent: str
    started_at: str
    ended_at: str | None
    summary: str | None
    developer: str = ""


_COLUMNS = "id, project_id, agent, started_at, ended_at, summary, developer"


def close_open(conn: Connection, project_id: str, developer: str, ended_at: str) -> None:
    """End the developer's open session on the project, if one is."""
    ended = conn.dialect.greatest("CAST(? AS TEXT)", "started_at")
    conn.execute(
        f"UPDATE sessions SET ended_at = {ended} "
        "WHERE project_id = ? AND developer = ? AND ended_at IS NULL",
        (ended_at, project_id, developer),
    )


def insert_session(conn: Connection, session: SessionRow) -> None:
    conn.execute(
        f"INSERT INTO sessions({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            session.id,
            session.project_id,
            session.agent,
            session.started_at,
            session.ended_at,
            session.summary,
            session.developer,
        ),
    )


def end_session(conn: Connection, session_id: str, ended_at: str, summary: str | None) -> None:
    dialect = conn.dialect
    visible, shown = dialect.visible("sessions")
    conn.execute(
        "UPDATE sessions SET ended_at = "
        f"coalesce(ended_at, {dialect.greatest('CAST(? AS TEXT)', 'started_at')}), "
        f"summary = coalesce(CAST(? AS TEXT), summary) WHERE id = ? AND {visible}",
        (ended_at, summary, session_id, *shown),
    )


def latest_session(conn: Connection, project_id: str) -> SessionRow | None:
    visible, shown = conn.dialect.visible("sessions")
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM sessions WHERE project_id = ? AND {visible} "
        "ORDER BY started_at DESC, id DESC LIMIT 1",
        (project_id, *shown),
    ).fetchone()
    return SessionRow(*row) if row else None


def open_session(conn: Connection, project_id: str, developer: str) -> SessionRow | None:
    """The developer's open session on the project, if one is (the schema allows one)."""
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM sessions WHERE project_id = ? AND developer = ? "
        "AND ended_at IS NULL",
        (project_id, developer),
    ).fetchone()
    return SessionRow(*row) if row else None


def open_sessions(conn: Connection, project_ids: Iterable[str], developer: str) -> dict[str, str]:
    """The id of the developer's open session on each of these projects that has one."""
    wanted = json.dumps(sorted(project_ids))
    rows = conn.execute(
        "SELECT project_id, id FROM sessions WHERE ended_at IS NULL AND developer = ? "
        f"AND project_id IN (SELECT value FROM {conn.dialect.json_rows('?', 'wanted')})",
        (developer, wanted),
    )
    return dict(rows.fetchall())


def get_session(conn: Connection, session_id: str) -> SessionRow | None:
    visible, shown = conn.dialect.visible("sessions")
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM sessions WHERE id = ? AND {visible}", (session_id, *shown)
    ).fetchone()
    return SessionRow(*row) if row else None


def list_sessions(conn: Connection, project_id: str | None, limit: int | None) -> list[SessionRow]:
    """Sessions newest first, of one project or (with None) of every project."""
    visible, shown = conn.dialect.visible("sessions")
    where = visible if project_id is None else f"project_id = ? AND {visible}"
    params: list[object] = [*shown] if project_id is None else [project_id, *shown]
    sql = f"SELECT {_COLUMNS} FROM sessions WHERE {where} ORDER BY started_at DESC, id DESC"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return [SessionRow(*row) for row in conn.execute(sql, params)]


def records_of_session(conn: Connection, session: SessionRow, until: str) -> list[Record]:
    """The project's records linked to the session or created in its window (started_at to
    `until`, both included), oldest first; global records belong to no session."""
    visible, shown = conn.dialect.visible("records")
    rows = conn.execute(
        f"SELECT {RECORD_COLUMNS} FROM records WHERE project_id = ? AND "
        f"(session_id = ? OR (created_at >= ? AND created_at <= ?)) AND {visible} "
        "ORDER BY created_at, id",
        (session.project_id, session.id, session.started_at, until, *shown),
    )
    return [record_from_row(row) for row in rows]
