"""Taking a change back: a superseded record made current again, a deleted one restored from
its log while its tombstone lasts. Each is a change of its own, logged like any other."""

from msgspec.structs import replace

from contextd.clock import now
from contextd.core.reading.reader import RecordReader
from contextd.core.writing.writer import RecordFiles
from contextd.errors import AmbiguousIdError, ConflictError, InvalidInputError, NotFoundError
from contextd.ids import MIN_PREFIX
from contextd.models import Record, Status
from contextd.storage import projects as project_rows
from contextd.storage import record_log
from contextd.storage import records as rows
from contextd.storage import sync_state as sync_rows
from contextd.storage.connection import Connection
from contextd.storage.store import Database

__all__ = ["Undoing"]


class Undoing:
    """Undo for the changes that have no opposite command of their own."""

    def __init__(self, db: Database, reader: RecordReader, files: RecordFiles | None) -> None:
        self._db = db
        self._reader = reader
        self._files = files

    def unsupersede(self, reference: str) -> tuple[Record, str]:
        """Make a superseded record current again; the links its supersede moved to the
        successor come back to it. Returns the record and the successor's id.

        Raises:
            ConflictError: the record is not superseded (or is archived as well).
        """
        with self._db.transaction() as conn:
            record = self._reader.get(reference)
            if record.status is not Status.SUPERSEDED or record.superseded_by is None:
                advice = "; unarchive it first" if record.status is Status.ARCHIVED else ""
                raise ConflictError(f"{record.id} is {record.status}, not superseded{advice}.")
            successor = record.superseded_by
            stamp = now()
            current = replace(record, status=Status.ACTIVE, superseded_by=None, updated_at=stamp)
            rows.replace_record(conn, current)
            moved = self._links_back(conn, record.id, "superseded", successor, stamp)
            self._written(conn, [current, *moved])
        return current, successor

    def restore(self, reference: str) -> Record:
        """Bring a deleted record back as it was when deleted (its handle and id too), with the
        links other records held to it; it syncs as a new version, newer than the deletion.

        Raises:
            NotFoundError: no deleted record is known by that name (or its deletion was
                forgotten, after sync.tombstone_retention_days).
            AmbiguousIdError: the name fits several deleted records.
            ConflictError: its project was removed since.
        """
        with self._db.transaction() as conn:
            deletion = self._deletion(conn, reference)
            assert deletion.prior is not None  # a deletion always keeps the record
            record = replace(deletion.prior, updated_at=now())
            if record.project_id and not project_rows.exists(conn, record.project_id):
                raise ConflictError(
                    f"{record.id} belonged to a project that was removed since; it cannot come "
                    "back."
                )
            rows.insert_record(conn, record, private=deletion.private, handle=deletion.handle)
            sync_rows.delete_tombstone(conn, record.id)
            linked = self._links_back(conn, record.id, None, None, record.updated_at, deletion.at)
            self._written(conn, [record, *linked])
        return record

    def _deletion(self, conn: Connection, reference: str) -> record_log.LogEntry:
        text = reference.strip()
        found = record_log.deletions_like(conn, text, is_prefix=len(text) >= MIN_PREFIX)
        if len(found) > 1:
            listed = [f"{e.handle} = {e.record_id}" for e in found]
            raise AmbiguousIdError(text, listed, len(found), "deleted records")
        if found and found[0].prior is not None:
            return found[0]
        try:
            still = self._reader.get(text)
        except AmbiguousIdError:
            raise
        except (NotFoundError, InvalidInputError):
            raise NotFoundError(
                f"No deleted record is known as {text!r}; a deletion can be undone for "
                "sync.tombstone_retention_days, then it is forgotten."
            ) from None
        raise ConflictError(f"{still.id} is {still.status}, not deleted.")

    def _links_back(
        self,
        conn: Connection,
        record_id: str,
        event: str | None,
        moved_to: str | None,
        stamp: str,
        at: str | None = None,
    ) -> list[Record]:
        """Records whose link to `record_id` the change being undone moved to `moved_to` (or
        dropped), linked to it again. The change is the record's last `event`, or the one at
        `at`."""
        if at is None:
            entries = [e for e in record_log.entries_of(conn, record_id) if e.event == event]
            if not entries:
                return []
            at = entries[-1].at
        back = []
        for other_id in record_log.relinked_at(conn, at, record_id):
            other = rows.get_record(conn, other_id)
            if other is None or record_id in other.related_to:
                continue
            if moved_to is not None and moved_to not in other.related_to:
                continue  # unlinked since: leave it as a person left it
            links = [i for i in other.related_to if i != moved_to] + [record_id]
            back.append(replace(other, related_to=tuple(links), updated_at=stamp))
        for other in back:
            rows.replace_record(conn, other)
        return back

    def _written(self, conn: Connection, records: list[Record]) -> None:
        if self._files is not None:
            self._files.written(conn, records, frozenset(), None)
