"""Capture without being asked: what an agent session changed, read from git and the store.

At the end of a turn a session that changed files or committed, and recorded nothing since it
started, is asked once to record what it decided (`request_at_stop`). When it ends without a
checkpoint, one is drafted from the facts (`draft_at_end`): its commits, the files it changed,
what it recorded and the goal of the last checkpoint. No model is involved: only facts.
"""

from datetime import timedelta
from pathlib import Path

from msgspec import Struct

from contextd import gitinfo
from contextd.clock import now, parse_instant, to_iso
from contextd.core.recall.presentation import fence, one_line
from contextd.credentials.scan import find_secrets
from contextd.fields import KINDS
from contextd.models import CheckpointBody, Kind, Origin, Project, Record, RecordDraft
from contextd.storage import capture_sessions as rows
from contextd.storage import records as record_rows
from contextd.storage.filters import RecordFilter
from contextd.storage.store import Database

__all__ = ["Activity", "Capture", "DRAFTED_TAG"]

DRAFTED_TAG = "drafted"  # a checkpoint contextd wrote from the facts, not the agent
_MAX_PATHS = 500  # files remembered as dirty at the start
_SHOWN_COMMITS = 8
_MAX_COMMITS = 200  # remembered as seen by the commit hook
_SHOWN_FILES = 12
_OWN_FOLDER = ".contextd/"  # the shared record files: contextd's writes, not the session's
_UNSEEN_S = 30 * 60  # a session unseen this long, that never said it ended, has ended
_SLACK_S = 60  # a commit or record this long after a session was last seen is still its own


class Activity(Struct, frozen=True):
    """What one session did: commit subjects (oldest first), files changed, records written."""

    commits: tuple[str, ...]
    files: tuple[str, ...]
    records: tuple[Record, ...]

    @property
    def changed_code(self) -> bool:
        return bool(self.commits or self.files)


class Capture:
    """Per agent session (the hook's session key) of one developer."""

    def __init__(self, db: Database, developer: str = "") -> None:
        self._db = db
        self._developer = developer

    def begin(self, project: Project, session_key: str, folder: Path) -> None:
        """Remember where git stands as the session starts (a session seen before keeps its
        first start)."""
        if self._db.read_only:
            return
        root = _root(folder)
        head = (gitinfo.head(root) or "") if root is not None else ""
        dirty = (gitinfo.dirty_paths(root) or [])[:_MAX_PATHS] if root is not None else []
        stamp = now()
        session = rows.CaptureSession(
            session_key, project.id, self._developer, stamp, stamp, str(root or ""), head,
            tuple(dirty), None, None, None,
        )  # fmt: skip
        with self._db.transaction() as conn:
            rows.begin(conn, session)

    def note_edits(
        self, project: Project, session_key: str, folder: Path, paths: tuple[Path, ...]
    ) -> None:
        """Remember the files an edit hook saw the session change, so the end of its turn
        knows it changed code without a `git status` (written only when one is new)."""
        if self._db.read_only or not paths:
            return
        session = rows.get(self._db.connection(), session_key, self._developer)
        if session is None:
            self.begin(project, session_key, folder)
            session = rows.get(self._db.connection(), session_key, self._developer)
        if session is None or not session.root:
            return
        root = Path(session.root)
        known = dict.fromkeys(session.edited)
        for path in paths:
            try:
                relative = path.relative_to(root).as_posix()
            except ValueError:
                continue  # outside the work tree: not this project's code
            if not relative.startswith(_OWN_FOLDER) and _storable(relative):
                known.setdefault(relative)
        if len(known) == len(session.edited) or len(session.edited) >= _MAX_PATHS:
            return
        with self._db.transaction() as conn:
            rows.note_edited(conn, session_key, tuple(known)[:_MAX_PATHS])

    def note_commit(
        self, project: Project, session_key: str, folder: Path, sha: str, subject: str
    ) -> None:
        """Remember a commit the post-commit hook saw the session make: while HEAD is the
        last one seen, the session's commits are known without `git log`."""
        if self._db.read_only:
            return
        session = rows.get(self._db.connection(), session_key, self._developer)
        if session is None:
            return  # unseen at its start: what it committed is read from git, if ever
        seen = [c for c in session.commits_seen if c[0] != sha][-_MAX_COMMITS + 1 :]
        with self._db.transaction() as conn:
            rows.note_commits(
                conn, session_key, (*seen, (sha, subject if _storable(subject) else ""))
            )

    def request_at_stop(self, project: Project, session_key: str, folder: Path) -> str:
        """The request to record, for a session that changed code and recorded nothing since
        it started; "" otherwise, and always "" once it was asked."""
        if self._db.read_only:
            return ""
        session = rows.get(self._db.connection(), session_key, self._developer)
        if session is None:
            self.begin(project, session_key, folder)  # first seen now: nothing to compare yet
            return ""
        if session.asked_at is not None or session.ended_at is not None:
            return ""
        activity = None
        if not self._written_records(project, session, limit=1):
            activity = self.activity(project, session, folder)
        stamp = now()
        with self._db.transaction() as conn:
            if activity is None or not activity.changed_code:
                rows.seen(conn, session_key, stamp)
                return ""
            rows.mark_asked(conn, session_key, stamp)
        return request_text(activity, project)

    def draft_at_end(
        self, project: Project, session_key: str, folder: Path | None
    ) -> RecordDraft | None:
        """A checkpoint for a session that committed or recorded and left none; None when it
        left one, did nothing, or already ended. `folder` None: the session ended unseen (an
        agent without a session-end hook): only what it did while it was seen counts."""
        session = rows.get(self._db.connection(), session_key, self._developer)
        if session is None or session.ended_at is not None:
            return None
        activity = self.activity(project, session, folder)
        if any(r.kind is Kind.CHECKPOINT for r in activity.records):
            return None
        if not (activity.commits or activity.records):
            return None
        return draft_checkpoint(activity, self._last_goal(project, session.started_at))

    def ended(self, session_key: str, checkpoint: Record | None) -> None:
        if self._db.read_only:
            return
        with self._db.transaction() as conn:
            rows.end(conn, session_key, now(), None if checkpoint is None else checkpoint.id)

    def readings(self, project: Project, limit: int = 5) -> list[rows.Extraction]:
        """The latest readings of this developer's transcripts on the project (the
        extractor's), newest first: how each went."""
        return rows.extractions(self._db.connection(), project.id, self._developer, limit)

    def transcript_grew(self, session_key: str, transcript: Path) -> bool:
        """Whether `transcript` holds more than its last reading took (one stat, one row):
        a hook starts the extractor only then."""
        try:
            size = transcript.lstat().st_size
        except OSError:
            return False
        state = rows.extraction(self._db.connection(), session_key, self._developer)
        return size != (state.offset if state is not None else 0)

    def unended(self, project: Project, session_key: str) -> list[str]:
        """Sessions of this developer on the project that never said they ended (an agent
        without a session-end hook) and were not seen for a while (another agent may still be
        at work in the project), newest first, other than `session_key`."""
        cutoff = to_iso(parse_instant(now()) - timedelta(seconds=_UNSEEN_S))
        conn = self._db.connection()
        found = rows.open_others(conn, project.id, self._developer, session_key)
        return [s.session_key for s in found if s.seen_at < cutoff]

    def activity(
        self, project: Project, session: rows.CaptureSession, folder: Path | None
    ) -> Activity:
        """What the session did: in its work tree now (`folder` given: the session is live),
        or up to when it was last seen. Costs `git log` when HEAD moved past what the commit
        hook saw, and one `git status` unless the edit hooks named the files it changed."""
        root = Path(session.root) if session.root else None
        commits: list[gitinfo.Commit] = []
        head = (gitinfo.head(root) or "") if root is not None else ""
        seen = session.commits_seen
        subjects: tuple[str, ...] | None = None
        if seen and head == seen[-1][0] and folder is not None:
            subjects = tuple(subject for _sha, subject in seen)  # the hook saw each one
        elif root is not None and head != session.start_head:
            found = gitinfo.commits(root, after=session.start_head or None, limit=200) or []
            if not session.start_head:  # no commit yet when it started: those made since
                found = [c for c in found if c.committed_at >= _seconds(session.started_at) - 1]
            latest = None if folder is not None else _seconds(session.seen_at) + _SLACK_S
            commits = [c for c in found if latest is None or c.committed_at <= latest]
        files = dict.fromkeys(f.path for c in commits for f in c.files)
        files.update(dict.fromkeys(session.edited))
        if folder is not None and root is not None and not session.edited:
            # No edit hook saw a change (an agent without one, or edits made by commands):
            # ask git what differs from the start.
            already = set(session.start_dirty)
            now_dirty = gitinfo.dirty_paths(root) or []
            files.update(dict.fromkeys(p for p in now_dirty if p not in already))
        return Activity(
            subjects if subjects is not None else tuple(c.subject for c in commits),
            tuple(p for p in files if not p.startswith(_OWN_FOLDER)),
            tuple(self._written_records(project, session, bounded=folder is None)),
        )

    def _written_records(
        self,
        project: Project,
        session: rows.CaptureSession,
        *,
        bounded: bool = False,
        limit: int | None = None,
    ) -> list[Record]:
        before = None
        if bounded:
            before = to_iso(parse_instant(session.seen_at) + timedelta(seconds=_SLACK_S))
        scope = RecordFilter(
            project.id,
            statuses=(),
            since=session.started_at,
            before=before,
            written_by=self._developer,
        )
        conn = self._db.connection()
        return record_rows.list_records(conn, scope, oldest_first=True, limit=limit)

    def _last_goal(self, project: Project, before: str) -> str:
        scope = RecordFilter(
            project.id, kinds=(Kind.CHECKPOINT,), before=before, developer=self._developer
        )
        for record in record_rows.list_records(self._db.connection(), scope, limit=5):
            body = record.body
            if isinstance(body, CheckpointBody) and body.goal:
                return body.goal
        return ""


def _storable(text: str) -> bool:
    """Whether a path or subject an agent's hook reported may be kept: no secret, no control
    character (a payload is the agent's words, not a fact about the repository)."""
    return text.isprintable() and not find_secrets(text)


def _root(folder: Path) -> Path | None:
    """The git work tree holding `folder`, found by its `.git` (no process to start)."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _seconds(instant: str) -> float:
    return parse_instant(instant).timestamp()


def _listed(items: tuple[str, ...], limit: int) -> list[str]:
    shown = [one_line(item)[:200] for item in items[-limit:]]
    if len(items) > limit:
        shown.insert(0, f"(and {len(items) - limit} earlier)")
    return shown


def request_text(activity: Activity, project: Project) -> str:
    """What the end-of-turn hook asks: record what this session settled. Commit subjects and
    file names are the repository's text: quoted, never in contextd's own voice."""
    facts: list[str] = []
    if activity.commits:
        facts.append("commits:")
        facts += [f"- {s}" for s in _listed(activity.commits, _SHOWN_COMMITS)]
    if activity.files:
        facts.append("files changed:")
        facts += [f"- {p}" for p in _listed(activity.files, _SHOWN_FILES)]
    tools = {spec.kind: spec.tool for spec in KINDS.values()}
    return (
        "contextd: this session changed code and recorded nothing in project memory. Before "
        "you stop, record what the next session must not have to rediscover: a choice "
        f"between alternatives with {tools['decision']} (with why it was chosen), a rule "
        f"that must hold from now on with {tools['constraint']}, a gotcha or fact worth "
        f"keeping with {tools['memory']}, and, if the work is unfinished, where it stands "
        f"with {tools['checkpoint']}. Record nothing trivial: no routine edits, nothing the "
        "code or a commit message already says. If nothing qualifies, simply stop; you will "
        "not be asked again this session.\n"
        + fence("\n".join(facts), attributes={"project": project.slug, "source": "git"})
    )


def draft_checkpoint(activity: Activity, goal: str) -> RecordDraft:
    """A checkpoint from the facts of a session; lines that hold a secret are left out."""
    done = [f"Committed: {s}" for s in _listed(activity.commits, _SHOWN_COMMITS)]
    done += [
        f"Recorded {r.kind}: {one_line(r.title)[:200]}" for r in activity.records[-_SHOWN_COMMITS:]
    ]
    if activity.files:
        names = ", ".join(one_line(p)[:120] for p in activity.files[:_SHOWN_FILES])
        more = len(activity.files) - _SHOWN_FILES
        done.append(f"Changed: {names}" + (f" (and {more} more)" if more > 0 else ""))
    done = [line for line in done if not find_secrets(line)]
    if activity.commits:
        summary = f"Session ended after: {one_line(activity.commits[-1])[:150]}"
    else:
        summary = f"Session ended after recording: {one_line(activity.records[-1].title)[:150]}"
    if find_secrets(summary):
        summary = "Session ended (drafted from its commits)"
    goal = "" if find_secrets(goal) else goal
    return RecordDraft(
        Kind.CHECKPOINT,
        summary,
        CheckpointBody(goal, tuple(done), ()),
        tags=(DRAFTED_TAG,),
        origin=Origin.AGENT,
        asked_by="capture",
    )
