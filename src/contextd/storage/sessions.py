"""SQL for sessions: one stretch of work by one agent on one project (at most one open)."""

import sqlite3
from dataclasses import dataclass

__all__ = [
    "SessionRow",
    "close_open",
    "end_session",
    "get_session",
    "insert_session",
    "latest_session",
]


@dataclass(frozen=True, slots=True)
class SessionRow:
    id: str
    project_id: str
    agent: str
    started_at: str
    ended_at: str | None
    summary: str | None


_COLUMNS = "id, project_id, agent, started_at, ended_at, summary"


def close_open(conn: sqlite3.Connection, project_id: str, ended_at: str) -> None:
    conn.execute(
        "UPDATE sessions SET ended_at = ? WHERE project_id = ? AND ended_at IS NULL",
        (ended_at, project_id),
    )


def insert_session(conn: sqlite3.Connection, session: SessionRow) -> None:
    conn.execute(
        f"INSERT INTO sessions({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
        (
            session.id,
            session.project_id,
            session.agent,
            session.started_at,
            session.ended_at,
            session.summary,
        ),
    )


def end_session(
    conn: sqlite3.Connection, session_id: str, ended_at: str, summary: str | None
) -> None:
    conn.execute(
        "UPDATE sessions SET ended_at = coalesce(ended_at, ?), "
        "summary = coalesce(?, summary) WHERE id = ?",
        (ended_at, summary, session_id),
    )


def latest_session(conn: sqlite3.Connection, project_id: str) -> SessionRow | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM sessions WHERE project_id = ? ORDER BY started_at DESC LIMIT 1",
        (project_id,),
    ).fetchone()
    return SessionRow(*row) if row else None


def get_session(conn: sqlite3.Connection, session_id: str) -> SessionRow | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return SessionRow(*row) if row else None
