"""Writing records: create, update, and the lifecycle from active to deleted, each write one
transaction under the same rules whichever surface asked."""

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Protocol

from msgspec import Struct
from msgspec.structs import replace

from contextd.clock import now
from contextd.core.reading.reader import RecordReader
from contextd.core.writing.appending import joined
from contextd.core.writing.duplicates import DuplicateGuard
from contextd.core.writing.edits import edited_draft
from contextd.core.writing.holding import held_by
from contextd.core.writing.validation import checked_text, validate_draft
from contextd.errors import (
    ConflictError,
    DuplicateError,
    InvalidInputError,
    ProviderUnavailableError,
    UnknownOutcomeError,
)
from contextd.fields import text_fields
from contextd.ids import new_id
from contextd.models import (
    Group,
    Project,
    Record,
    RecordDraft,
    RecordEdit,
    Similar,
    Status,
    Stored,
    body_to_dict,
)
from contextd.retrieval.indexer import Indexer, embedding_text
from contextd.retrieval.vector_index import VectorIndex
from contextd.storage import records as rows
from contextd.storage import review_queue as review_rows
from contextd.storage import sessions as session_rows
from contextd.storage import vectors as vector_rows
from contextd.storage.connection import Connection
from contextd.storage.store import Database

__all__ = ["PreparedWrite", "RecordFiles", "RecordWriter"]

log = logging.getLogger(__name__)
# The group a draft of this project names ("" for the project's own), or a refusal.
GroupTarget = Callable[[str, Project], Group]


class PreparedWrite(Struct, frozen=True):
    """A change that passed every rule, ready to be written with others in one transaction."""

    record: Record  # the row as it will be stored
    before: Record | None  # the row it replaces, which must still be stored as it was
    vectors: tuple[vector_rows.EmbeddingRow, ...] = ()
    drop_vector: bool = False  # the text changed and no vector was computed for it
    private: bool = False  # a new record kept out of a shared project's repository files
    similar: tuple[Similar, ...] = ()  # stored records it resembles (when asked for)


class RecordFiles(Protocol):
    """Files kept beside the store for some records (a shared project's repository), written
    inside the store's transaction: a failed file write stores nothing."""

    def written(
        self,
        conn: Connection,
        records: Sequence[Record],
        private: frozenset[str],
        checkout: str | None,
    ) -> None:
        """`checkout`: the work tree the write was asked from, when the caller knows it."""
        ...

    def removed(self, conn: Connection, record: Record) -> None: ...


class RecordWriter:
    """Create, change and retire records; every write is one transaction."""

    def __init__(
        self,
        db: Database,
        reader: RecordReader,
        indexer: Indexer | None = None,
        index: VectorIndex | None = None,
        guard: DuplicateGuard | None = None,
        files: RecordFiles | None = None,
        developer: str = "",
        review: str = "off",
        group_of: GroupTarget | None = None,
    ) -> None:
        self._db = db
        # Which group a draft naming one goes into, refusing a project outside it (the
        # confinement rule of core.workspace.groups, handed down by the app).
        self._group_of = group_of
        self._review = review  # [capture] review: which new records wait for a person
        self._reader = reader
        self._developer = developer  # whose open session new records join
        self._indexer = indexer
        self._index = index
        self._guard = guard
        self._files = files

    # --- writing -------------------------------------------------------------------------

    def create(
        self,
        draft: RecordDraft,
        project: Project | None,
        *,
        force: bool = False,
        supersedes: Sequence[str] = (),
        queue: bool = True,
    ) -> Record:
        """Validate and store a new record in `project` (or globally when the draft says so);
        with `supersedes`, the named records are marked replaced by it in the same transaction.
        A draft the review policy holds (`queue`) is checked the same way and waits for a
        person instead: the record returned is not stored yet.

        Raises:
            ValidationError: a field breaks its kind's rules or holds a secret.
            DuplicateError: it restates a stored record other than those it supersedes
                (unless `force`).
        """
        return self.record(draft, project, force=force, supersedes=supersedes, queue=queue).record

    def record(
        self,
        draft: RecordDraft,
        project: Project | None,
        *,
        force: bool = False,
        supersedes: Sequence[str] = (),
        queue: bool = True,
    ) -> Stored:
        """`create`, with what a writer reports back: the records it resembles (from the one
        neighbour search the duplicate check made) and short ids."""
        replaced = [self._reader.get(reference).id for reference in supersedes]
        if queue and held_by(self._review, draft):
            return self._hold(draft, project, force=force, replaced=replaced)
        records, prepared = self._store(
            [draft], project, force=force, replaced=replaced, want_similar=True
        )
        similar = list(prepared[0].similar)
        shorts = self._reader.handles([records[0].id, *(s.record.id for s in similar)])
        return Stored(records[0], similar, shorts, group=self._group_slug(draft, project))

    def _hold(
        self, draft: RecordDraft, project: Project | None, *, force: bool, replaced: list[str]
    ) -> Stored:
        """Check a draft as a write is checked, then keep it in the review queue."""
        (prepared,) = self._prepare(
            [draft], project, force=force, exempt=frozenset(replaced), want_similar=True
        )
        record = prepared.record
        held = review_rows.Held(
            record.id, record.project_id, self._developer, draft, tuple(replaced), now(), "pending"
        )
        with self._db.transaction() as conn:
            review_rows.hold(conn, held)
        similar = list(prepared.similar)
        shorts = self._reader.handles([s.record.id for s in similar]) | {record.id: record.id}
        return Stored(record, similar, shorts, held=True, group=self._group_slug(draft, project))

    def create_many(
        self,
        drafts: Sequence[RecordDraft],
        project: Project | None,
        *,
        short_title_ok: bool = False,
        force: bool = False,
        progress: Callable[[int], None] | None = None,
    ) -> list[Record]:
        """Validate and embed every draft, then store them all in one transaction.

        Nothing is stored if any draft is refused.
        """
        return self._store(
            drafts, project, short_title_ok=short_title_ok, force=force, progress=progress
        )[0]

    def _store(
        self,
        drafts: Sequence[RecordDraft],
        project: Project | None,
        *,
        short_title_ok: bool = False,
        force: bool = False,
        replaced: Sequence[str] = (),
        progress: Callable[[int], None] | None = None,
        want_similar: bool = False,
    ) -> tuple[list[Record], list[PreparedWrite]]:
        seen = self._db.change_token()
        prepared = self._prepare(
            drafts,
            project,
            short_title_ok=short_title_ok,
            force=force,
            exempt=frozenset(replaced),
            progress=progress,
            want_similar=want_similar,
        )
        with _uncertain(self._db, prepared), self._db.transaction():
            # Checked again holding the write lock when another writer (an agent on another
            # machine, say) committed since it was prepared: it may have stored the same.
            if self._db.change_token() != seen:
                self._check_again(prepared, force=force, exempt=frozenset(replaced))
            records = self.write_all(prepared, project.checkout if project else None)
            for old in replaced:
                self.supersede(old, records[0].id)
        return records, prepared

    def _prepare(
        self,
        drafts: Sequence[RecordDraft],
        project: Project | None,
        *,
        short_title_ok: bool = False,
        force: bool = False,
        exempt: frozenset[str] = frozenset(),
        progress: Callable[[int], None] | None = None,
        want_similar: bool = False,
    ) -> list[PreparedWrite]:
        """New records built, embedded in one batch and checked against the store, each with
        one neighbour search (whose records also say what it resembles, when wanted)."""
        records = [self._build(d, project, short_title_ok) for d in drafts]
        vectors = {row.record_id: row for row in self._embed(records, progress)}
        return [
            self._checked(record, draft, vectors.get(record.id), force, exempt, want_similar)
            for record, draft in zip(records, drafts, strict=True)
        ]

    def prepare_each(
        self,
        drafts: Sequence[RecordDraft],
        project: Project | None,
        progress: Callable[[int], None] | None = None,
    ) -> list[PreparedWrite | InvalidInputError | DuplicateError]:
        """Each draft checked as `prepare_create` checks it, all embedded in one batch (an
        import of 300 long records embeds at the model's batch speed): its write, or the
        error that refuses it. `progress(n)` is told as each batch of n is embedded, and of
        the drafts nothing embeds (refused before, or no model) at the end, so it reaches the
        number of drafts."""
        built: list[Record | InvalidInputError] = []
        for draft in drafts:
            try:
                built.append(self._build(draft, project, False))
            except InvalidInputError as exc:
                built.append(exc)
        records = [b for b in built if isinstance(b, Record)]
        told = 0

        def tell(count: int) -> None:
            nonlocal told
            told += count
            if progress is not None:
                progress(count)

        vectors = {row.record_id: row for row in self._embed(records, tell)}
        if told < len(drafts):
            tell(len(drafts) - told)
        prepared: list[PreparedWrite | InvalidInputError | DuplicateError] = []
        for made, draft in zip(built, drafts, strict=True):
            if isinstance(made, InvalidInputError):
                prepared.append(made)
                continue
            try:
                prepared.append(self._checked(made, draft, vectors.get(made.id), False))
            except (InvalidInputError, DuplicateError) as exc:
                prepared.append(exc)
        return prepared

    def _checked(
        self,
        record: Record,
        draft: RecordDraft,
        row: vector_rows.EmbeddingRow | None,
        force: bool,
        exempt: frozenset[str] = frozenset(),
        want_similar: bool = False,
    ) -> PreparedWrite:
        """A built record checked against the store (its one neighbour search)."""
        similar: list[Similar] = []
        if self._guard is not None and (want_similar or not force):
            vector = row.vector if row else None
            near = (
                self._guard.near(record, vector)
                if force
                else self._guard.check(record, vector, exempt=exempt)
            )
            similar = self._guard.similar(record, near) if want_similar else []
        return PreparedWrite(
            record, None, (row,) if row else (), private=draft.private, similar=tuple(similar)
        )

    def _check_again(
        self, prepared: Sequence[PreparedWrite], *, force: bool, exempt: frozenset[str]
    ) -> None:
        if force or self._guard is None:
            return
        for change in prepared:
            vector = change.vectors[0].vector if change.vectors else None
            self._guard.check(change.record, vector, exempt=exempt)

    def similar(self, record: Record) -> list[Similar]:
        """Stored records close to a stored `record` (advisory: restatements and
        contradictions), by the vector stored for it."""
        if self._guard is None or self._index is None:
            return []
        vector = self._index.vectors_of([record.id]).get(record.id)
        return self._guard.similar(record, self._guard.near(record, vector))

    def _build(self, draft: RecordDraft, project: Project | None, short_title_ok: bool) -> Record:
        if project is None and not draft.is_global:
            raise InvalidInputError(
                "A project record needs a project.", actions=("name_project", "make_global")
            )
        clean = validate_draft(draft, short_title_ok=short_title_ok)
        stamp = clean.created_at or now()
        related = tuple(dict.fromkeys(self._reader.get(prefix).id for prefix in clean.related_to))
        return Record(
            id=new_id(),
            project_id=self._owner(clean, project),
            kind=clean.kind,
            title=clean.title,
            body=clean.body,
            category=clean.category,
            tags=clean.tags,
            retrieval_hints=clean.retrieval_hints,
            origin=clean.origin,
            priority=clean.priority,
            status=Status.ACTIVE,
            superseded_by=None,
            related_to=related,
            session_id=None,
            created_at=stamp,
            updated_at=stamp,
            verified_at=stamp,
        )

    def _group_slug(self, draft: RecordDraft, project: Project | None) -> str | None:
        if draft.group is None or draft.is_global or project is None or self._group_of is None:
            return None
        return self._group_of(draft.group, project).slug

    def _owner(self, draft: RecordDraft, project: Project | None) -> str | None:
        """Whose the new record is: global, a group the project belongs to, or the project."""
        if draft.is_global or project is None:
            if draft.group is not None and not draft.is_global:
                raise InvalidInputError(
                    "A group record is written from one of the group's projects; name the project.",
                    actions=("name_project",),
                )
            if draft.group is not None:
                raise InvalidInputError("A record is global or a group's, not both.")
            return None
        if draft.group is None:
            return project.id
        if self._group_of is None:
            raise InvalidInputError("Records cannot be written into a group here.")
        return self._group_of(draft.group, project).id

    def update(self, reference: str, edit: RecordEdit, *, force: bool = False) -> Record:
        """Change fields of a record; the result must pass the same rules as a new one."""
        return self.write_all([self.prepare_update(reference, edit, force=force)])[0]

    def append(self, reference: str, text: str, field: str | None = None) -> Record:
        """Add `text` to a record's main text (or to `field`, a text field of its kind), as the
        next sentence or list line (`appending.joined`), and re-stamp it verified: what a later
        session learned about it, kept with it."""
        return self.write_all([self.prepare_append(reference, text, field)])[0]

    def prepare_append(self, reference: str, text: str, field: str | None = None) -> PreparedWrite:
        """An `append` checked, not stored yet."""
        record = self._reader.get(reference)
        fields = text_fields(record.kind)
        field = field or fields[0]
        addition = text.strip()
        if not addition:
            raise InvalidInputError("Give the text to add.")
        if field not in fields:
            raise InvalidInputError(
                f"A {record.kind} has no text field {field!r} to add to ({', '.join(fields)})."
            )
        if field == "title":
            edit = RecordEdit(title=joined(record.title, addition))
        else:
            current = str(body_to_dict(record.body).get(field) or "")
            edit = RecordEdit(body={field: joined(current, addition)})
        prepared = self.prepare_update(record.id, edit, force=True)
        stamped = replace(prepared.record, verified_at=prepared.record.updated_at)
        return replace(prepared, record=stamped)

    def link(self, reference: str, other: str) -> Record:
        """Relate a record to another (one way; retrieval brings the other along)."""
        record = self._reader.get(reference)
        target = self._reader.get(other)
        if target.id in record.related_to:
            return record
        return self.update(record.id, RecordEdit(related_to=(*record.related_to, target.id)))

    def prepare_create(self, draft: RecordDraft, project: Project | None) -> PreparedWrite:
        """A new record checked like `create` checks it (rules, secrets, duplicates), not
        stored yet; `write_all` stores it."""
        return self._prepare([draft], project)[0]

    def prepare_update(
        self, reference: str, edit: RecordEdit, *, force: bool = False
    ) -> PreparedWrite:
        """A record's change checked like `update` checks it, not stored yet."""
        if edit.is_empty():
            raise InvalidInputError("Nothing to change; give at least one field to update.")
        record = self._reader.get(reference)
        related = edit.related_to
        if related is not None:
            related = tuple(dict.fromkeys(self._reader.get(r).id for r in related))
            if record.id in related:
                raise InvalidInputError("A record cannot be related to itself.")
        edited = edited_draft(record.as_draft(), replace(edit, related_to=related))
        draft = validate_draft(edited)
        updated = replace(
            record,
            title=draft.title,
            body=draft.body,
            category=draft.category,
            tags=draft.tags,
            retrieval_hints=draft.retrieval_hints,
            priority=draft.priority,
            related_to=draft.related_to,
            updated_at=now(),
        )
        text_changed = embedding_text(updated) != embedding_text(record)
        vectors = self._embed([updated]) if text_changed else []
        if text_changed and not force and self._guard is not None:
            self._guard.check(updated, vectors[0].vector if vectors else None)
        return PreparedWrite(updated, record, tuple(vectors), text_changed and not vectors)

    def prepare_archive(self, reference: str, reason: str | None = None) -> PreparedWrite:
        """A record taken out of retrieval, checked like `archive` checks it, not stored yet.

        Raises:
            ValidationError: the reason is too long or holds a secret.
        """
        if reason is not None:
            reason = checked_text("reason", reason, label="archive reason")
        record = self._reader.get(reference)
        if record.status is Status.ARCHIVED:
            raise ConflictError(f"{record.id} is already archived.")
        archived = replace(
            record,
            status=Status.ARCHIVED,
            updated_at=now(),
            archived_reason=(reason or "").strip() or None,
        )
        return PreparedWrite(archived, record)

    def restate_each_other(self, first: PreparedWrite, second: PreparedWrite) -> bool:
        """Whether two prepared records would be refused as duplicates of each other."""
        if self._guard is None or not first.vectors or not second.vectors:
            return False
        return self._guard.restate_each_other(
            first.record, first.vectors[0].vector, second.record, second.vectors[0].vector
        )

    def write_all(
        self, prepared: Sequence[PreparedWrite], checkout: str | None = None
    ) -> list[Record]:
        """Store prepared changes in one transaction: all of them, or none when a record
        changed since it was prepared.

        Raises:
            ConflictError: a record was changed by someone else after it was prepared.
        """
        with _uncertain(self._db, prepared), self._db.transaction() as conn:
            new = {p.record.project_id for p in prepared if p.before is None}
            sessions = session_rows.open_sessions(
                conn, {p for p in new if p is not None}, self._developer
            )
            written = []
            for change in prepared:
                if change.before is None:
                    record = _linked([change.record], sessions)[0]
                    rows.insert_record(conn, record, private=change.private)
                else:
                    record = change.record
                    if rows.get_record(conn, record.id) != change.before:
                        raise ConflictError(
                            f"{record.id} changed while it was being updated; try again."
                        )
                    rows.replace_record(conn, record)
                if change.vectors:
                    stamp = now() if change.before is None else record.updated_at
                    vector_rows.upsert_embeddings(conn, change.vectors, stamp)
                elif change.drop_vector:  # query-time catch-up embeds the new text
                    vector_rows.delete_embedding(conn, record.id)
                written.append(record)
            private = frozenset(p.record.id for p in prepared if p.private)
            self._changed(conn, written, private, checkout)
        return written

    def supersession(self, old_reference: str, new_reference: str) -> tuple[Record, Record]:
        """The two records of a supersede, checked: `new` may replace `old`.

        Raises:
            InvalidInputError, ConflictError: it may not (the same record, `old` replaced
                already, `new` not active, `new` of another project).
        """
        old = self._reader.get(old_reference)
        new = self._reader.get(new_reference)
        if old.id == new.id:
            raise InvalidInputError("A record cannot supersede itself; name two records.")
        if old.status is Status.SUPERSEDED:
            raise ConflictError(
                f"{old.id} is already superseded by {old.superseded_by}; supersede that "
                "record instead."
            )
        if new.status is not Status.ACTIVE:
            raise ConflictError(
                f"{new.id} is {new.status}; only an active record can replace another."
            )
        if new.project_id not in (old.project_id, None):
            raise InvalidInputError(
                "A record can only be superseded by one of its own project or a global one."
            )
        return old, new

    def supersede(self, old_reference: str, new_reference: str) -> tuple[Record, Record]:
        """Mark `old` as replaced by `new`; `old` keeps its content but leaves default retrieval.

        Links follow: every other record whose `related_to` named `old` names `new` instead,
        changed (and re-stamped, so the change travels by sync and repository files) in the
        same transaction.
        """
        with self._db.transaction() as conn:
            old, new = self.supersession(old_reference, new_reference)
            stamp = now()
            retired = replace(old, status=Status.SUPERSEDED, superseded_by=new.id, updated_at=stamp)
            rows.replace_record(conn, retired)
            relinked = [
                replace(other, related_to=_relinked(other, old.id, new.id), updated_at=stamp)
                for other in rows.linking(conn, old.id)
                if other.id not in (old.id, new.id)  # the successor may name what it replaces
            ]
            for other in relinked:
                rows.replace_record(conn, other)
            self._changed(conn, [retired, *relinked])
        return retired, new

    def archive(self, reference: str, reason: str | None = None) -> Record:
        """Take a record out of retrieval, reversibly, keeping why."""
        return self.write_all([self.prepare_archive(reference, reason)])[0]

    def unarchive(self, reference: str) -> Record:
        """Bring an archived record back (as superseded when it had been replaced)."""
        with self._db.transaction() as conn:
            record = self._reader.get(reference)
            if record.status is not Status.ARCHIVED:
                raise ConflictError(f"{record.id} is {record.status}, not archived.")
            status = Status.SUPERSEDED if record.superseded_by else Status.ACTIVE
            restored = replace(record, status=status, updated_at=now(), archived_reason=None)
            rows.replace_record(conn, restored)
            self._changed(conn, [restored])
        return restored

    def delete(self, reference: str) -> Record:
        """Delete a record for good, leaving a dated tombstone."""
        with self._db.transaction() as conn:
            record = self._reader.get(reference)
            rows.delete_record(conn, record, now())
            if self._files is not None:
                self._files.removed(conn, record)
        return record

    def verify(self, reference: str) -> Record:
        """Re-stamp a record as checked and still true today."""
        with self._db.transaction() as conn:
            record = self._reader.get(reference)
            stamp = now()
            verified = replace(record, verified_at=stamp, updated_at=stamp)
            rows.replace_record(conn, verified)
            self._changed(conn, [verified])
        return verified

    # --- helpers -------------------------------------------------------------------------

    def _changed(
        self,
        conn: Connection,
        records: Sequence[Record],
        private: frozenset[str] = frozenset(),
        checkout: str | None = None,
    ) -> None:
        if self._files is not None:
            self._files.written(conn, records, private, checkout)

    def _embed(
        self, records: Sequence[Record], progress: Callable[[int], None] | None = None
    ) -> list[vector_rows.EmbeddingRow]:
        """Vectors for `records`, or none when the provider is off or unavailable right now
        (such records are embedded later, at query time or by `contextd refresh`)."""
        if self._indexer is None:
            return []
        try:
            return self._indexer.vectors_for(records, progress)
        except ProviderUnavailableError as exc:
            log.warning("storing %d records without vectors (%s)", len(records), exc)
            return []


def _linked(records: list[Record], open_sessions: dict[str, str]) -> list[Record]:
    """The records linked to their project's open session, whoever writes them (CLI, MCP,
    hooks); global records belong to no session."""
    return [
        replace(r, session_id=open_sessions.get(r.project_id))
        if r.project_id is not None and r.session_id is None
        else r
        for r in records
    ]


def _relinked(record: Record, old_id: str, new_id: str) -> tuple[str, ...]:
    """`record`'s links with `old_id` replaced by `new_id`, each once, never itself."""
    moved = (new_id if rid == old_id else rid for rid in record.related_to)
    return tuple(rid for rid in dict.fromkeys(moved) if rid != record.id)


@contextmanager
def _uncertain(db: Database, prepared: Sequence[PreparedWrite]) -> Iterator[None]:
    """A write whose commit got no answer, said of the record it was for: it may be stored,
    and showing it tells."""
    try:
        yield
    except UnknownOutcomeError as exc:
        if not prepared:
            raise
        record_id = prepared[0].record.id
        raise UnknownOutcomeError(
            f"The connection to the contextd server at {db.path} broke as {record_id} was "
            "being committed: it may or may not have been stored",
            actions=("show",),
            record_id=record_id,
        ) from exc
