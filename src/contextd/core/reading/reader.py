"""Reading records: one by id (or unique prefix) with its lifecycle, a project's lists and
counts. Nothing here writes, so readers (briefing, search, status, views) need none of the
write rules."""

from datetime import UTC, datetime, timedelta

from msgspec import Struct

from contextd.clock import to_iso
from contextd.core.reading.prefixes import matching_ids, refuse_ambiguous
from contextd.errors import InvalidInputError, NotFoundError
from contextd.models import Kind, Project, Reach, Record, Status
from contextd.storage import groups, handles, id_prefixes
from contextd.storage import records as rows
from contextd.storage.filters import RecordFilter
from contextd.storage.store import Database

__all__ = ["MAX_DAYS", "RecordDetail", "RecordReader"]

MAX_DAYS = 36_500  # a hundred years: what a date can still go back


class RecordDetail(Struct, frozen=True):
    """A record with the lifecycle facts a reader needs beside it."""

    record: Record
    successor: Record | None  # the record that replaced it, when superseded
    current: Record | None  # the end of the supersede chain, when different from `successor`
    predecessors: tuple[Record, ...]  # records this one replaced
    group: str | None = None  # the slug of the project group holding it, if one does


class RecordReader:
    """Records as a project sees them: its own, its group's and the global ones, the current
    developer's checkpoints, the checkout's shared files."""

    def __init__(self, db: Database, developer: str = "") -> None:
        self._db = db
        self._developer = developer  # whose checkpoints `latest` and lists show

    def reach(self, project: Project | None) -> Reach:
        """Whose records the project sees, nearest first (its own, its group's, global)."""
        return groups.reach(self._db.connection(), project.id if project else None)

    def get(self, reference: str) -> Record:
        """The record with this handle (D12), id or id prefix.

        Raises:
            AmbiguousIdError: it fits several records (each is listed; none is acted on).
            NotFoundError: no record has it (saying when it was deleted, if it was).
        """
        conn = self._db.connection()
        found = matching_ids(
            reference,
            lambda prefix: id_prefixes.ids_with_prefix(conn, "records", prefix, limit=10),
            "Id",
            lambda handle: handles.record_with_handle(conn, handle),
        )
        if len(found) > 1:
            total = id_prefixes.count_with_prefix(conn, "records", reference.strip().lower())
            refuse_ambiguous(reference, found, total, self._candidate, "records")
        record = rows.get_record(conn, found[0]) if found else None
        if record is None:
            deleted = rows.tombstone_of(conn, reference.strip().lower())
            if deleted:
                raise NotFoundError(f"Record {reference!r} was deleted on {deleted[:10]}.")
            raise NotFoundError(f"No record with id {reference!r}.", actions=("list",))
        return record

    def _candidate(self, record_id: str) -> str:
        """A record a person may have meant: handle, id, kind, title."""
        conn = self._db.connection()
        record = rows.get_record(conn, record_id)
        handle = handles.handles_of(conn, [record_id]).get(record_id, "?")
        if record is None:
            return f"{handle} = {record_id}"
        title = record.title if len(record.title) <= 60 else record.title[:59] + "…"
        return f"{handle} = {record_id}, {record.kind.value} {title!r}"

    def detail(self, reference: str) -> RecordDetail:
        record = self.get(reference)
        conn = self._db.connection()
        successor = rows.get_record(conn, record.superseded_by) if record.superseded_by else None
        current = None
        if successor is not None:
            end_head = rows.chain_end(conn, successor.id)
            end = (rows.get_record(conn, end_head.id) if end_head else None) or successor
            current = end if end.id != successor.id else None
        predecessors = tuple(
            r for r in (rows.get_record(conn, i) for i in rows.successors_of(conn, record.id)) if r
        )
        group = groups.group_slug(conn, record.project_id) if record.project_id else None
        return RecordDetail(record, successor, current, predecessors, group)

    def list_records(
        self,
        project: Project,
        *,
        kinds: tuple[Kind, ...] = (),
        include_inactive: bool = False,
        limit: int | None = None,
    ) -> list[Record]:
        """The project's and global records, newest first (active ones unless asked)."""
        statuses = () if include_inactive else (Status.ACTIVE,)
        scope = RecordFilter(
            project.id,
            kinds=kinds,
            statuses=statuses,
            checkout=project.checkout,
            developer=self._developer,
        )
        return rows.list_records(self._db.connection(), scope, limit=limit)

    def stale(self, project: Project, days: int) -> list[Record]:
        """Active records not verified within `days` days, oldest-verified first."""
        if not 0 <= days <= MAX_DAYS:
            raise InvalidInputError(f"A number of days must be 0 to {MAX_DAYS}, not {days}.")
        cutoff = to_iso(datetime.now(UTC) - timedelta(days=days))
        records = [r for r in self.list_records(project) if r.verified_at < cutoff]
        return sorted(records, key=lambda r: r.verified_at)

    def counts(self, project: Project) -> dict[Kind, int]:
        scope = RecordFilter(project.id, checkout=project.checkout)
        return rows.count_by_kind(self._db.connection(), scope)

    def latest(self, project: Project, kind: Kind) -> Record | None:
        scope = RecordFilter(
            project.id, kinds=(kind,), checkout=project.checkout, developer=self._developer
        )
        found = rows.list_records(self._db.connection(), scope, limit=1)
        return found[0] if found else None

    def handles(self, ids: list[str]) -> dict[str, str]:
        """Each record's handle (D12), for people to read and type; it names the record for
        good. An id that is no stored record (a deleted one, say) maps to itself."""
        found = handles.handles_of(self._db.connection(), ids)
        return {i: found.get(i, i) for i in ids}
