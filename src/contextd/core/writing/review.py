"""The review queue: what agents write can wait for a person before it becomes the project's
truth (`[capture] review`). A held draft passed every rule a write must pass (validation, the
secret scan, the duplicate guard) but is kept apart from the records: nothing recalls,
briefs, exports or shares it. Approving writes it through the same writer, checked again;
rejecting keeps it, marked, so the same proposal is known as turned down. Only a person
decides: no MCP tool approves, and the CLI asks for a terminal."""

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from contextd.clock import now
from contextd.core.reading.prefixes import matching_ids, refuse_ambiguous
from contextd.core.writing.edits import edited_draft
from contextd.core.writing.holding import PROPOSAL
from contextd.errors import InvalidInputError, NotFoundError
from contextd.ids import MIN_PREFIX
from contextd.models import Project, Record, RecordDraft, RecordEdit
from contextd.storage import id_prefixes
from contextd.storage import review_queue as rows
from contextd.storage.dialect import acting_as
from contextd.storage.owners import HOME_OWNER
from contextd.storage.store import Database

if TYPE_CHECKING:
    from contextd.core.writing.writer import RecordWriter

__all__ = ["Held", "ReviewQueue", "whose"]

Held = rows.Held


def _written_by(held: Held) -> str:
    """Who wrote a held draft, as the review lists say it: an agent, contextd's capture (a
    checkpoint drafted from facts), or a model reading the session's transcript."""
    return {"capture": "drafted", PROPOSAL: "proposed"}.get(held.draft.asked_by, "agent")


def whose(held: Held, viewer: str) -> str:
    """Who wrote a held draft, naming the developer whose agent it was when that is not the
    person looking (a reviewer of everyone's drafts)."""
    by = _written_by(held)
    return by if held.developer == viewer else f"{by}, {held.developer or 'owner'}"


class ReviewQueue:
    """The held drafts one person sees: their own, or every developer's for whoever reviews
    them all (`everyone`: a home's owner, a team server's administrator). Approving another
    developer's draft writes it as theirs (a private one stays private to them)."""

    def __init__(
        self,
        db: Database,
        writer: Callable[[], "RecordWriter"],
        developer: str = "",
        everyone: Callable[[], bool] = lambda: False,
    ) -> None:
        self._db = db
        self._writer = writer  # built when a draft is approved: counting needs no write path
        self._developer = developer
        self._everyone = everyone

    @property
    def viewer(self) -> str:
        return self._developer

    def waiting(self, project: Project | None) -> list[Held]:
        """Drafts waiting for this project (and global ones), oldest first."""
        conn = self._db.connection()
        return rows.waiting(conn, project.id if project else None, self._shown())

    def decided_or_waiting(self, project: Project) -> list[Held]:
        """Drafts of this project waiting or rejected (what was proposed before)."""
        return rows.kept(self._db.connection(), project.id, self._developer)

    def hold(
        self,
        draft: RecordDraft,
        draft_id: str,
        project_id: str | None,
        *,
        request: str = "create",
        target: str | None = None,
        payload: dict[str, Any] | None = None,
    ) -> Held:
        """Keep a draft that passed every rule of a write (the caller checked it) for a
        person: a new record, or (`request`) a change to the stored record `target`."""
        held = Held(
            draft_id,
            project_id,
            self._developer,
            draft,
            (),
            now(),
            "pending",
            request=request,
            target=target,
            payload=payload or {},
        )
        with self._db.transaction() as conn:
            rows.hold(conn, held)
        return held

    def waiting_changes(self, record_id: str) -> list[Held]:
        """This developer's waiting changes to one stored record."""
        return rows.changes_to(self._db.connection(), record_id, self._developer)

    def count(self, project: Project | None) -> int:
        conn = self._db.connection()
        return rows.count_waiting(conn, project.id if project else None, self._shown())

    def _shown(self) -> str | None:
        """Whose drafts this person sees: None for every developer's."""
        return None if self._everyone() else self._developer

    def approve(self, references: Sequence[str], project: Project | None) -> list[Record]:
        """Write each draft as a record (checked again: the store may have changed since it
        was held) and take it out of the queue.

        Raises:
            NotFoundError: a reference names no waiting draft of this project.
            ValidationError, DuplicateError: a draft no longer passes (it stays waiting).
        """
        from contextd.core.writing.agent_changes import apply_held

        written = []
        for held in self._find_all(references, project):
            with self._as_its_developer(held):
                if held.request == "create":
                    place = project if held.project_id is not None else None
                    record = self._writer().create(
                        held.draft, place, supersedes=held.supersedes, queue=False
                    )
                else:
                    record = apply_held(self._writer(), held)
            with self._db.transaction() as conn:
                rows.remove(conn, held.id)
            written.append(record)
        return written

    def _as_its_developer(self, held: Held) -> AbstractContextManager[None]:
        """Within the block the store writes as the developer whose draft it is."""
        if held.developer == self._developer:
            return nullcontext()
        return acting_as(held.developer or HOME_OWNER)

    def reject(
        self, references: Sequence[str], project: Project | None, reason: str = ""
    ) -> list[Held]:
        """Turn drafts down, keeping why.

        Raises:
            NotFoundError: a reference names no waiting draft of this project.
            ValidationError: the reason is too long or holds a secret.
        """
        from contextd.core.writing.validation import checked_text

        why = checked_text("reason", reason, label="reason", limit=500, one_line=True) or ""
        found = self._find_all(references, project)
        with self._db.transaction() as conn:
            for held in found:
                rows.decide(conn, held.id, why, now())
        return found

    def edit(self, reference: str, project: Project | None, edit: RecordEdit) -> Held:
        """Change a waiting draft under the rules of `update` (validated as a new record is).

        Raises:
            NotFoundError: no waiting draft of this project has that id.
            ValidationError: the edited draft breaks a rule.
        """
        from contextd.core.writing.validation import validate_draft

        (held,) = self._find_all([reference], project)
        if held.request != "create":
            raise InvalidInputError(
                f"A waiting {held.request} of a stored record cannot be edited; reject it, or "
                "approve it and change the record after."
            )
        changed = validate_draft(edited_draft(held.draft, edit))
        with self._db.transaction() as conn:
            rows.replace_draft(conn, held.id, changed)
        return replace(held, draft=changed)

    def short_ids(self, ids: list[str]) -> dict[str, str]:
        """The shortest prefix (8 characters at least) that tells each draft from the others."""
        conn = self._db.connection()
        return id_prefixes.shortest_unique_prefixes(conn, "review_queue", ids, MIN_PREFIX)

    def _find_all(self, references: Sequence[str], project: Project | None) -> list[Held]:
        if not references:
            raise InvalidInputError("Name at least one waiting draft by its id.")
        mine = {h.id: h for h in self.waiting(project)}
        found: dict[str, Held] = {}
        for reference in references:
            matches = matching_ids(
                reference, lambda prefix: [i for i in mine if i.startswith(prefix)], "Draft id"
            )
            refuse_ambiguous(
                reference, matches, len(matches), lambda i: _described(mine[i]), "waiting drafts"
            )
            if not matches:
                shown = reference if reference.isprintable() else repr(reference)
                raise NotFoundError(
                    f"No waiting draft has the id {shown[:40]!r}; `contextd review` lists them."
                )
            found[matches[0]] = mine[matches[0]]
        return list(found.values())


def _described(held: Held) -> str:
    asked = f"new {held.draft.kind}" if held.request == "create" else held.request
    return f"{held.id}, {asked} {held.draft.title[:60]!r}"
