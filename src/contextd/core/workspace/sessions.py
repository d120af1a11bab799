"""Sessions: opening one closes the project's previous one, so a crashed agent cannot collect
the next agent's work; what a session produced is read back by link and by time window."""

from msgspec import Struct

from contextd.clock import now, parse_instant
from contextd.core.reading.prefixes import matching_ids, refuse_ambiguous
from contextd.core.writing.validation import checked_text
from contextd.errors import InvalidInputError, NotFoundError
from contextd.ids import MIN_PREFIX, new_id
from contextd.models import Kind, Project, Record
from contextd.storage import id_prefixes
from contextd.storage import sessions as rows
from contextd.storage.store import Database

__all__ = ["SessionReport", "SessionRow", "SessionService"]

SessionRow = rows.SessionRow


class SessionReport(Struct, frozen=True):
    """A session with what it produced: checkpoints linked to it or made in its window, and
    the other records made in the window, oldest first."""

    session: SessionRow
    seconds: int  # to its end, or to now while it is open
    checkpoints: tuple[Record, ...]
    records: tuple[Record, ...]

    def of_kind(self, kind: Kind) -> tuple[Record, ...]:
        return tuple(r for r in self.records if r.kind is kind)


class SessionService:
    """Sessions of one developer (`developer`: '' for a home's own store)."""

    def __init__(self, db: Database, developer: str = "") -> None:
        self._db = db
        self._developer = developer

    def start(self, project: Project, agent: str) -> SessionRow:
        """Open a session for `agent`, closing this developer's session still open on the
        project.

        Raises:
            ValidationError: the agent's name is not one line of text, or holds a secret.
        """
        name = checked_text("agent", agent, label="agent name", limit=200, one_line=True)
        with self._db.transaction() as conn:
            # Stamped once the write lock is held: a session opened by another process while
            # this one waited is closed after it started, never before.
            stamp = now()
            rows.close_open(conn, project.id, self._developer, stamp)
            session = SessionRow(
                new_id(), project.id, name or "unknown", stamp, None, None, self._developer
            )
            rows.insert_session(conn, session)
        return session

    def end(self, session_id: str, summary: str | None = None) -> SessionRow:
        """Close a session (idempotent), keeping a summary of what it did.

        Raises:
            ValidationError: the summary is too long or holds a secret.
        """
        if summary is not None:
            summary = checked_text("summary", summary, label="session summary") or None
        with self._db.transaction() as conn:
            rows.end_session(conn, session_id, now(), summary)
            ended = rows.get_session(conn, session_id)
        if ended is None:
            raise NotFoundError(f"No session with id {session_id!r}.")
        return ended

    def end_open(self, project: Project, summary: str | None = None) -> SessionRow:
        """Close the project's open session.

        Raises:
            NotFoundError: no session is open on the project.
        """
        current = self.open_for(project)
        if current is None:
            raise NotFoundError(
                f"No session is open on {project.name}; `contextd session start --agent NAME` "
                "opens one, or pass --id to name an ended one."
            )
        return self.end(current.id, summary)

    def get(self, session_id: str) -> SessionRow | None:
        return rows.get_session(self._db.connection(), session_id)

    def resolve(self, reference: str) -> SessionRow:
        """The session whose id is `reference` or starts with it (at least 8 characters)."""
        conn = self._db.connection()
        matches = matching_ids(
            reference,
            lambda prefix: id_prefixes.ids_with_prefix(conn, "sessions", prefix, limit=10),
            "Session id",
        )
        if len(matches) > 1:
            total = id_prefixes.count_with_prefix(conn, "sessions", reference.strip().lower())
            refuse_ambiguous(reference, matches, total, self._candidate, "sessions")
        session_id = matches[0] if matches else None
        found = rows.get_session(conn, session_id) if session_id else None
        if found is None:
            raise NotFoundError(
                f"No session with id {reference!r}; `contextd session list --all-projects` "
                "lists them."
            )
        return found

    def _candidate(self, session_id: str) -> str:
        """One line naming a session a person may have meant: id, agent, start."""
        found = rows.get_session(self._db.connection(), session_id)
        if found is None:
            return session_id
        return f"{session_id}, {found.agent} from {found.started_at[:16]}"

    def latest(self, project: Project) -> SessionRow | None:
        return rows.latest_session(self._db.connection(), project.id)

    def open_for(self, project: Project) -> SessionRow | None:
        return rows.open_session(self._db.connection(), project.id, self._developer)

    def list_sessions(self, project: Project | None, limit: int | None = None) -> list[SessionRow]:
        """Newest first, of `project` or of every project (None)."""
        if limit is not None and limit < 1:
            raise InvalidInputError("--limit must be 1 or more.")
        return rows.list_sessions(
            self._db.connection(), None if project is None else project.id, limit
        )

    def report(self, session: SessionRow) -> SessionReport:
        until = session.ended_at or now()
        produced = rows.records_of_session(self._db.connection(), session, until)
        return SessionReport(
            session=session,
            seconds=duration_seconds(session.started_at, until),
            checkpoints=tuple(r for r in produced if r.kind is Kind.CHECKPOINT),
            records=tuple(r for r in produced if r.kind is not Kind.CHECKPOINT),
        )

    def short_ids(self, ids: list[str]) -> dict[str, str]:
        """The shortest unambiguous prefix of each session id."""
        return id_prefixes.shortest_unique_prefixes(
            self._db.connection(), "sessions", ids, MIN_PREFIX
        )


def duration_seconds(started_at: str, until: str) -> int:
    elapsed = parse_instant(until) - parse_instant(started_at)
    return max(int(elapsed.total_seconds()), 0)
