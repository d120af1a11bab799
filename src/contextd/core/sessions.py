"""Sessions: opening one closes the project's previous one, so a crashed agent cannot collect
the next agent's work."""

from contextd.clock import now
from contextd.errors import NotFoundError
from contextd.ids import new_id
from contextd.models import Project
from contextd.storage import sessions as rows
from contextd.storage.db import Database

__all__ = ["SessionService"]

SessionRow = rows.SessionRow


class SessionService:
    def __init__(self, db: Database) -> None:
        self._db = db

    def start(self, project: Project, agent: str) -> SessionRow:
        """Open a session for `agent`, closing any session still open on the project."""
        stamp = now()
        session = SessionRow(new_id(), project.id, agent.strip() or "unknown", stamp, None, None)
        with self._db.transaction() as conn:
            rows.close_open(conn, project.id, stamp)
            rows.insert_session(conn, session)
        return session

    def end(self, session_id: str, summary: str | None = None) -> SessionRow:
        """Close a session (idempotent), keeping a summary of what it did."""
        with self._db.transaction() as conn:
            rows.end_session(conn, session_id, now(), summary)
            ended = rows.get_session(conn, session_id)
        if ended is None:
            raise NotFoundError(f"No session with id {session_id!r}.")
        return ended

    def get(self, session_id: str) -> SessionRow | None:
        return rows.get_session(self._db.connection(), session_id)

    def latest(self, project: Project) -> SessionRow | None:
        return rows.latest_session(self._db.connection(), project.id)
