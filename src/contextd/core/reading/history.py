"""A record's log read back: each change, when, by whom and through what; a deleted record's
too, while its deletion is remembered."""

from msgspec import Struct

from contextd.core.reading.reader import RecordReader
from contextd.errors import NotFoundError
from contextd.ids import MIN_PREFIX
from contextd.storage import record_log
from contextd.storage.store import Database

__all__ = ["Change", "RecordHistory"]


class Change(Struct, frozen=True):
    at: str
    event: str
    actor: str  # '' in a home: its one person
    via: str
    title: str  # the record's title before the change ('' for its creation)


class RecordHistory:
    def __init__(self, db: Database, reader: RecordReader) -> None:
        self._db = db
        self._reader = reader

    def of(self, reference: str) -> tuple[str, str, list[Change]]:
        """The record's id, handle and changes, oldest first.

        Raises:
            NotFoundError: no record, stored or deleted, is known by that name.
            AmbiguousIdError: the name fits several records.
        """
        conn = self._db.connection()
        try:
            record_id = self._reader.get(reference).id
        except NotFoundError:
            text = reference.strip()
            gone = record_log.deletions_like(conn, text, is_prefix=len(text) >= MIN_PREFIX)
            if len(gone) != 1:
                raise
            record_id = gone[0].record_id
        entries = record_log.entries_of(conn, record_id)
        handle = next((e.handle for e in reversed(entries) if e.handle), None)
        handle = handle or self._reader.handles([record_id])[record_id]
        changes = [
            Change(e.at, e.event, e.actor, e.via, e.prior.title if e.prior else "") for e in entries
        ]
        return record_id, handle, changes
