"""Reading records: one by id (or unique prefix) with its lifecycle, a project's lists and
counts. Nothing here writes, so readers (briefing, search, status, views) need none of the
write rules."""

from datetime import UTC, datetime, timedelta

from msgspec import Struct

from contextd.clock import to_iso
from contextd.core.reading.prefixes import match_prefix
from contextd.errors import InvalidInputError, NotFoundError
from contextd.ids import MIN_PREFIX
from contextd.models import Kind, Project, Reach, Record, Status
from contextd.storage import groups, id_prefixes
from contextd.storage import records as rows
from contextd.storage.filters import RecordFilter
from contextd.storage.store import Database

__all__ = ["RecordDetail", "RecordReader"]


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
        """The record with this id or unique id prefix.

        Raises:
            NotFoundError: no record has it (saying when it was deleted, if it was).
        """
        conn = self._db.connection()
        record_id = match_prefix(
            reference,
            lambda prefix: id_prefixes.ids_with_prefix(conn, "records", prefix),
            "Id",
            "records",
            lambda prefix: id_prefixes.record_with_short_id(conn, prefix),
        )
        if record_id is None:
            deleted = rows.tombstone_of(conn, reference.strip().lower())
            if deleted:
                raise NotFoundError(f"Record {reference!r} was deleted on {deleted[:10]}.")
            raise NotFoundError(f"No record with id {reference!r}.", actions=("list",))
        record = rows.get_record(conn, record_id)
        if record is None:
            raise NotFoundError(f"No record with id {reference!r}.")
        return record

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
        if days < 0:
            raise InvalidInputError(f"A number of days must be zero or more, not {days}.")
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

    def short_ids(self, ids: list[str]) -> dict[str, str]:
        """Each record's short id, for people to read and type: the one printed when it was
        stored, which names it for good (else the shortest prefix no other id shares)."""
        conn = self._db.connection()
        stored = id_prefixes.short_ids_of(conn, ids)
        missing = [i for i in ids if i not in stored]
        return stored | id_prefixes.shortest_unique_prefixes(conn, "records", missing, MIN_PREFIX)
