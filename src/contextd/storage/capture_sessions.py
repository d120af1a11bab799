"""SQL for what capture remembers of each agent session: where git stood when it started,
when it was last seen, whether it was asked to record, and the checkpoint drafted for it."""

import json

from msgspec import Struct

from contextd.storage.connection import Connection

__all__ = [
    "CaptureSession", "Extraction", "begin", "end", "extracted", "extraction", "extractions",
    "get", "mark_asked", "note_commits", "note_edited", "open_others", "seen",
]  # fmt: skip

_COLUMNS = (
    "session_key, project_id, developer, started_at, seen_at, root, start_head, start_dirty, "
    "asked_at, ended_at, checkpoint_id, edited, commits_seen"
)


class CaptureSession(Struct, frozen=True):
    session_key: str
    project_id: str
    developer: str
    started_at: str
    seen_at: str
    root: str  # the git work tree ('' outside git)
    start_head: str  # '' outside git or before the first commit
    start_dirty: tuple[str, ...]  # files already changed when it started
    asked_at: str | None
    ended_at: str | None
    checkpoint_id: str | None
    edited: tuple[str, ...] = ()  # files the edit hooks saw it change (relative to root)
    commits_seen: tuple[tuple[str, str], ...] = ()  # (sha, subject) the commit hook saw


def _row(row: tuple[object, ...]) -> CaptureSession:
    key, project_id, developer, started, seen, root, head = (str(v) for v in row[:7])
    dirty = json.loads(str(row[7]))
    asked, ended, checkpoint = (None if v is None else str(v) for v in row[8:11])
    edited = json.loads(str(row[11]))
    seen_commits = json.loads(str(row[12]))
    commits = tuple(
        (str(c[0]), str(c[1]))
        for c in (seen_commits if isinstance(seen_commits, list) else [])
        if isinstance(c, list) and len(c) == 2
    )
    return CaptureSession(
        key, project_id, developer, started, seen, root, head,
        tuple(str(p) for p in dirty) if isinstance(dirty, list) else (),
        asked, ended, checkpoint,
        tuple(str(p) for p in edited) if isinstance(edited, list) else (),
        commits,
    )  # fmt: skip


def begin(conn: Connection, session: CaptureSession) -> None:
    """Remember a session's start; a session seen before keeps its first start."""
    conn.execute(
        f"INSERT INTO capture_sessions({_COLUMNS}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, ?, ?) "
        "ON CONFLICT(session_key) DO NOTHING",
        (
            session.session_key,
            session.project_id,
            session.developer,
            session.started_at,
            session.seen_at,
            session.root,
            session.start_head,
            json.dumps(list(session.start_dirty)),
            json.dumps(list(session.edited)),
            json.dumps([list(c) for c in session.commits_seen]),
        ),
    )


def get(conn: Connection, session_key: str, developer: str) -> CaptureSession | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM capture_sessions WHERE session_key = ? AND developer = ?",
        (session_key, developer),
    ).fetchone()
    return None if row is None else _row(row)


def seen(conn: Connection, session_key: str, at: str) -> None:
    conn.execute("UPDATE capture_sessions SET seen_at = ? WHERE session_key = ?", (at, session_key))


def note_edited(conn: Connection, session_key: str, paths: tuple[str, ...]) -> None:
    conn.execute(
        "UPDATE capture_sessions SET edited = ? WHERE session_key = ?",
        (json.dumps(list(paths)), session_key),
    )


def note_commits(conn: Connection, session_key: str, commits: tuple[tuple[str, str], ...]) -> None:
    conn.execute(
        "UPDATE capture_sessions SET commits_seen = ? WHERE session_key = ?",
        (json.dumps([list(c) for c in commits]), session_key),
    )


def mark_asked(conn: Connection, session_key: str, at: str) -> None:
    conn.execute(
        "UPDATE capture_sessions SET asked_at = ?, seen_at = ? WHERE session_key = ?",
        (at, at, session_key),
    )


def end(conn: Connection, session_key: str, at: str, checkpoint_id: str | None) -> None:
    conn.execute(
        "UPDATE capture_sessions SET ended_at = ?, checkpoint_id = ? "
        "WHERE session_key = ? AND ended_at IS NULL",
        (at, checkpoint_id, session_key),
    )


def open_others(
    conn: Connection, project_id: str, developer: str, session_key: str
) -> list[CaptureSession]:
    """The developer's sessions on the project that never said they ended, newest first."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM capture_sessions WHERE project_id = ? AND developer = ? "
        "AND ended_at IS NULL AND session_key <> ? ORDER BY started_at DESC",
        (project_id, developer, session_key),
    ).fetchall()
    return [_row(r) for r in rows]


class Extraction(Struct, frozen=True):
    """How far a session's transcript was read for proposals, and how the last reading went
    (e.g. "proposed 2", "not sent: it holds a secret")."""

    session_key: str
    offset: int  # bytes of the transcript read; the next reading starts here
    at: str | None
    outcome: str | None


def extraction(conn: Connection, session_key: str, developer: str) -> Extraction | None:
    row = conn.execute(
        "SELECT session_key, extracted_bytes, extracted_at, extraction FROM capture_sessions "
        "WHERE session_key = ? AND developer = ?",
        (session_key, developer),
    ).fetchone()
    return None if row is None else _extraction(row)


def _extraction(row: tuple[object, ...]) -> Extraction:
    offset = row[1]
    return Extraction(
        str(row[0]),
        offset if isinstance(offset, int) else 0,
        None if row[2] is None else str(row[2]),
        None if row[3] is None else str(row[3]),
    )


def extracted(conn: Connection, session_key: str, offset: int, outcome: str, at: str) -> None:
    """Note a reading: where the next one starts and how this one went."""
    conn.execute(
        "UPDATE capture_sessions SET extracted_bytes = ?, extracted_at = ?, extraction = ? "
        "WHERE session_key = ?",
        (offset, at, outcome, session_key),
    )


def extractions(conn: Connection, project_id: str, developer: str, limit: int) -> list[Extraction]:
    """The developer's latest readings on the project, newest first."""
    rows = conn.execute(
        "SELECT session_key, extracted_bytes, extracted_at, extraction FROM capture_sessions "
        "WHERE project_id = ? AND developer = ? AND extracted_at IS NOT NULL "
        "ORDER BY extracted_at DESC LIMIT ?",
        (project_id, developer, limit),
    ).fetchall()
    return [_extraction(r) for r in rows]
