"""Storing a source's entries through the record service: each one checked like any other write
(its kind's rules, secrets, duplicates), its links and supersession resolved to record ids, and
all of them written in one transaction. An entry refused (a bad file, a supersede loop) is
reported and left out, never stopping the rest; one the source has not decided yet (a
proposed ADR) waits in the review queue, labelled a proposal, never current truth.

An entry that restates a stored record (of any status) is "already stored" and stands for that
record in every link, so running an import again adds nothing and a successor imported later
still finds the record it replaces. One that has the title of a record an earlier import
stored (or its identity: an ADR's number), of the same kind, but other text was edited in its
source since: that record is updated to the new text (its id, links, tags, priority and status
kept), never stored twice.
"""

from collections import Counter
from collections.abc import Callable, Sequence

from msgspec.structs import replace

from contextd.clock import now
from contextd.core.reading.reader import RecordReader
from contextd.core.writing.holding import PROPOSAL
from contextd.core.writing.review import ReviewQueue
from contextd.core.writing.validation import checked_text
from contextd.core.writing.writer import PreparedWrite, RecordWriter
from contextd.credentials.scan import find_secrets
from contextd.errors import DuplicateError, InvalidInputError, NotFoundError
from contextd.importers.entry import SourceEntry, SourceStatus
from contextd.importers.loops import supersede_loops
from contextd.importers.report import AlreadyStored, Imported, ImportReport, Refused, Retired
from contextd.importers.twins import Twins
from contextd.models import Origin, Project, Record, RecordEdit, Status, body_to_dict
from contextd.provenance import FROM_IMPORT, changes_via
from contextd.storage.store import Database

__all__ = ["Importer"]


class _Plan:
    """The entries sorted out: new records (not stored yet), and every source id's record."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}  # source id -> the record standing for it
        self.new: list[tuple[SourceEntry, PreparedWrite]] = []
        self.revised: list[tuple[SourceEntry, PreparedWrite]] = []  # stored, edited since
        self.stored: set[str] = set()  # source ids already in the store before this import
        self.proposed: list[tuple[SourceEntry, PreparedWrite]] = []  # to hold for review


class Importer:
    """Imports source entries into a project as `import` records (see the module)."""

    def __init__(
        self, writer: RecordWriter, reader: RecordReader, db: Database, review: ReviewQueue
    ) -> None:
        self._writer = writer
        self._reader = reader
        self._db = db
        self._review = review

    def run(
        self,
        project: Project,
        entries: Sequence[SourceEntry],
        report: ImportReport,
        progress: Callable[[int, int], None] | None = None,
    ) -> ImportReport:
        """Check every entry, then store the new ones with their links (but in a dry run), and
        hold the undecided ones for review; `report` is filled in and returned.
        `progress(done, total)` is told as the entries are embedded (the slow part)."""
        report.checked = len(entries)
        plan = self._sort_out(project, entries, report, progress)
        finished = [
            (entry, self._finished(entry, write, plan, report)) for entry, write in plan.new
        ]
        retired = self._retired(entries, plan, [w for _, w in finished])
        looped = self._refuse_loops(entries, plan, [w for _, w in finished], retired, report)
        finished = [(entry, w) for entry, w in finished if w.record.id not in looped]
        retired = [r for r in retired if r.record_id not in looped]
        writes = [w for _, w in finished]
        revisions = [write for _, write in plan.revised]
        if not report.dry_run and (writes or revisions or retired):
            with self._db.transaction(), changes_via(FROM_IMPORT):
                self._writer.write_all([*writes, *revisions])
                for change in retired:
                    self._writer.supersede(change.record_id, change.successor_id)
        order = {entry.source_id: index for index, entry in enumerate(entries)}
        report.imported = sorted(
            (_imported(entry, w.record) for entry, w in finished),
            key=lambda i: order[i.source_id],
        )
        report.proposed = self._held(project, plan.proposed, report.dry_run)
        report.updated = sorted(
            (_imported(entry, w.record) for entry, w in plan.revised),
            key=lambda i: order[i.source_id],
        )
        report.already_stored.sort(key=lambda a: order[a.source_id])
        report.retired = retired
        return report

    def _held(
        self, project: Project, proposed: list[tuple[SourceEntry, PreparedWrite]], dry_run: bool
    ) -> list[Imported]:
        """Entries the source has not decided yet, kept in the review queue (once: one held or
        turned down before is not held again)."""
        known = {held.draft.title for held in self._review.decided_or_waiting(project)}
        waiting = []
        for entry, write in proposed:
            if write.record.title in known:
                continue
            draft = replace(entry.draft, asked_by=PROPOSAL)
            if not dry_run:
                self._review.hold(draft, write.record.id, write.record.project_id)
            waiting.append(_imported(entry, write.record))
        return waiting

    def _sort_out(
        self,
        project: Project,
        entries: Sequence[SourceEntry],
        report: ImportReport,
        progress: Callable[[int, int], None] | None,
    ) -> _Plan:
        """Prepare every entry: new, already stored, or refused. Current entries go first, so
        of two entries restating each other the current one is kept."""
        plan = _Plan()
        twins = Twins(self._writer)
        earlier = self._earlier_imports(project, entries)
        ranked = sorted(entries, key=lambda e: e.status is not SourceStatus.ACTIVE)
        embedded = 0

        def counted(batch: int) -> None:
            nonlocal embedded
            embedded += batch
            if progress is not None:
                progress(embedded, len(ranked))

        drafts = [entry.draft for entry in ranked]
        for entry, prepared in zip(
            ranked, self._writer.prepare_each(drafts, project, counted), strict=True
        ):
            try:
                if isinstance(prepared, Exception):
                    raise prepared
                write = prepared
                if entry.archived_reason:  # stored text too: the same size limit and scan
                    checked_text(
                        "archived_reason", entry.archived_reason, label="retirement reason"
                    )
            except DuplicateError as exc:
                self._restated(entry, self._reader.get(exc.existing_id), plan, report)
                continue
            except InvalidInputError as exc:
                report.refused.append(_refused(entry, exc))
                continue
            twin = twins.of(write)
            if twin is not None:
                plan.ids[entry.source_id] = twin.record.id
                report.already_stored.append(
                    AlreadyStored(entry.source_id, entry.where, twin.record.id)
                )
                continue
            before = earlier.get(entry.identity or "")
            if before is not None and before.kind is write.record.kind:
                self._restated(entry, before, plan, report)  # retitled in the source
                continue
            if entry.status is SourceStatus.PROPOSED:
                plan.proposed.append((entry, write))  # no record to link to: not decided
                continue
            twins.add(write)
            plan.ids[entry.source_id] = write.record.id
            plan.new.append((entry, write))
        order = {entry.source_id: index for index, entry in enumerate(entries)}
        report.refused.sort(key=lambda r: order[r.source_id])
        return plan

    def _earlier_imports(
        self, project: Project, entries: Sequence[SourceEntry]
    ) -> dict[str, Record]:
        """The records earlier imports stored, by the identity their entry had (SourceEntry
        .identity, kept as a retrieval hint), where exactly one entry and one record have it."""
        named = Counter(entry.identity for entry in entries if entry.identity)
        wanted = {identity for identity, count in named.items() if count == 1}
        if not wanted:
            return {}
        found: dict[str, list[Record]] = {}
        for record in self._reader.list_records(project, include_inactive=True):
            if record.origin is Origin.IMPORT:
                for hint in wanted.intersection(record.retrieval_hints):
                    found.setdefault(hint, []).append(record)
        return {identity: held[0] for identity, held in found.items() if len(held) == 1}

    def _restated(
        self, entry: SourceEntry, stored: Record, plan: _Plan, report: ImportReport
    ) -> None:
        """`entry` stands for a stored record: updated to the entry's text when the source
        edited it since (see _revision), else already stored."""
        plan.ids[entry.source_id] = stored.id
        plan.stored.add(entry.source_id)
        try:
            revision = self._revision(entry, stored, plan)
        except InvalidInputError as exc:
            report.refused.append(_refused(entry, exc))
            return
        if revision is None:
            report.already_stored.append(AlreadyStored(entry.source_id, entry.where, stored.id))
        else:
            plan.revised.append((entry, revision))

    def _revision(self, entry: SourceEntry, stored: Record, plan: _Plan) -> PreparedWrite | None:
        """The stored record rewritten with the entry's text, when an earlier import stored it
        (under the same title, or the same identity) and the source has edited it since; at
        most once per record.

        Raises:
            InvalidInputError: the edited text breaks a rule (a too-short field, a secret).
        """
        draft = entry.draft
        same = stored.title.casefold() == draft.title.casefold() or (
            entry.identity is not None and entry.identity in stored.retrieval_hints
        )
        if (
            not same
            or stored.origin is not Origin.IMPORT
            or stored.kind is not draft.kind
            or any(w.record.id == stored.id for _, w in plan.revised)
            or (stored.title, stored.body, stored.category)
            == (draft.title, draft.body, draft.category)
        ):
            return None
        hints = tuple(dict.fromkeys([*stored.retrieval_hints, *draft.retrieval_hints]))
        edit = RecordEdit(
            title=draft.title,
            category=draft.category,
            body=body_to_dict(draft.body),
            retrieval_hints=hints,
        )
        try:
            return self._writer.prepare_update(stored.id, edit)
        except DuplicateError:  # the new text restates another record: leave this one be
            return None

    def _finished(
        self, entry: SourceEntry, write: PreparedWrite, plan: _Plan, report: ImportReport
    ) -> PreparedWrite:
        """The record with its source's lifecycle, links and dates."""
        record = write.record
        successor = _linked(entry, entry.successor, plan, report) if entry.successor else None
        if successor == record.id:
            successor = None  # it restated its own successor: the two are one record now
        status, superseded_by, reason = _lifecycle(entry, successor, report.tool)
        related = (_linked(entry, link, plan, report) for link in entry.related)
        created = record.created_at if entry.draft.created_at else entry.verified_at
        # Checked today, by the person importing it, unless the source says when it was: an
        # ADR's date is when it was decided, which would make it stale on day one.
        verified = entry.verified_at or now()
        finished = replace(
            record,
            status=status,
            superseded_by=superseded_by,
            archived_reason=reason,
            related_to=tuple(dict.fromkeys(r for r in related if r and r != record.id)),
            created_at=created or record.created_at,
            verified_at=verified,
            updated_at=entry.updated_at or verified,
        )
        return replace(write, record=finished)

    def _retired(
        self, entries: Sequence[SourceEntry], plan: _Plan, writes: list[PreparedWrite]
    ) -> list[Retired]:
        """Stored records the source has replaced since they were stored: superseded by their
        successor when both are in this project's reach and the successor is current."""
        statuses = {w.record.id: (w.record.status, w.record.project_id) for w in writes}
        retired = []
        for entry in entries:
            if entry.source_id not in plan.stored or entry.status is SourceStatus.ACTIVE:
                continue
            old_id = plan.ids[entry.source_id]
            new_id = plan.ids.get(entry.successor or "")
            if new_id is None or new_id == old_id:
                continue
            old = self._reader.get(old_id)
            status, owner = statuses.get(new_id) or _state(self._reader.get(new_id))
            if (
                old.status is Status.ACTIVE
                and status is Status.ACTIVE
                and owner in (old.project_id, None)
            ):
                retired.append(Retired(old_id, new_id))
        return retired

    def _refuse_loops(
        self,
        entries: Sequence[SourceEntry],
        plan: _Plan,
        writes: list[PreparedWrite],
        retired: list[Retired],
        report: ImportReport,
    ) -> set[str]:
        """Refuse every entry on a loop of supersede links (each replacing the next, the last
        the first): stored so, none of them would be current. Returns their record ids."""
        links = {w.record.id: w.record.superseded_by for w in writes if w.record.superseded_by}
        links.update((r.record_id, r.successor_id) for r in retired)
        source_of: dict[str, str] = {}
        for entry in entries:
            source_of.setdefault(plan.ids.get(entry.source_id, ""), entry.source_id)
        where = {entry.source_id: entry.where for entry in entries}
        looped: set[str] = set()
        for loop in supersede_loops(links, self._stored_successor):
            looped.update(loop)
            named = [source_of.get(record_id, record_id) for record_id in loop]
            shown = " → ".join(_shown(name) for name in [*named, named[0]])
            for name in named:
                report.refused.append(
                    Refused(
                        name,
                        where.get(name, "the store"),
                        "superseded_by",
                        f"it is part of a supersede loop ({shown}): entries replacing each "
                        "other in a circle leave none of them current",
                    )
                )
        order = {entry.source_id: index for index, entry in enumerate(entries)}
        report.refused.sort(key=lambda r: order.get(r.source_id, len(order)))
        return looped

    def _stored_successor(self, record_id: str) -> str | None:
        try:
            return self._reader.get(record_id).superseded_by
        except NotFoundError:
            return None


def _imported(entry: SourceEntry, record: Record) -> Imported:
    return Imported(
        entry.source_id,
        entry.where,
        record.id,
        record.kind,
        record.status,
        record.title,
        record.category,
    )


def _refused(entry: SourceEntry, exc: InvalidInputError) -> Refused:
    return Refused(entry.source_id, entry.where, getattr(exc, "field", None), str(exc))


def _state(record: Record) -> tuple[Status, str | None]:
    return record.status, record.project_id


def _lifecycle(
    entry: SourceEntry, successor: str | None, tool: str
) -> tuple[Status, str | None, str | None]:
    """Status, superseded_by and archived_reason: a superseded entry whose successor did not
    come with it is archived, saying so."""
    if entry.status is SourceStatus.ACTIVE:
        return Status.ACTIVE, None, None
    if entry.status is SourceStatus.SUPERSEDED and successor is not None:
        return Status.SUPERSEDED, successor, None
    if entry.status is SourceStatus.SUPERSEDED:
        named = _shown(entry.successor) if entry.successor else "an entry it does not name"
        return (
            Status.ARCHIVED,
            None,
            entry.archived_reason or f"Superseded in {tool} by {named}, which was not imported.",
        )
    return Status.ARCHIVED, successor, entry.archived_reason


def _linked(entry: SourceEntry, link: str, plan: _Plan, report: ImportReport) -> str | None:
    found = plan.ids.get(link)
    if found is None:
        report.notes.append(
            f"{entry.source_id} ({entry.where}) links to {_shown(link)}, which is not in the "
            "import; that link was left out."
        )
    return found


def _shown(link: str) -> str:
    """A link the source names, fit to be printed or stored: short, and never a secret."""
    if find_secrets(link):
        return "something that looks like a secret"
    return link if len(link) <= 64 else link[:63] + "…"
