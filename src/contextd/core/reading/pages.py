"""Browsing a project's records a page at a time (with its global ones), filtered by kind,
status and tag: what a person scrolling a large store needs, without reading all of it."""

from msgspec import Struct

from contextd.errors import InvalidInputError
from contextd.models import Kind, Project, Record, Status
from contextd.storage import record_pages as rows
from contextd.storage.filters import RecordFilter
from contextd.storage.store import Database

__all__ = ["RecordPage", "RecordPages"]

MAX_PAGE = 500


class RecordPage(Struct, frozen=True):
    records: tuple[Record, ...]  # newest first
    total: int  # records matching the filters, over every page
    tags: tuple[tuple[str, int], ...]  # tags of the matching records (before the tag filter)


class RecordPages:
    def __init__(self, db: Database) -> None:
        self._db = db

    def page(
        self,
        project: Project,
        *,
        kinds: tuple[Kind, ...] = (),
        statuses: tuple[Status, ...] = (Status.ACTIVE,),
        tag: str | None = None,
        offset: int = 0,
        limit: int = 50,
        tag_limit: int = 200,
    ) -> RecordPage:
        """One page of the project's and global records; empty `statuses` means every one."""
        if not 1 <= limit <= MAX_PAGE or offset < 0:
            raise InvalidInputError(f"A page holds 1 to {MAX_PAGE} records from offset 0 on.")
        scope = RecordFilter(project.id, kinds=kinds, statuses=statuses)
        narrowed = RecordFilter(
            project.id, kinds=kinds, statuses=statuses, tags=(tag,) if tag else ()
        )
        with self._db.snapshot() as conn:  # the page, its total and its tags agree
            records = rows.page_of_records(conn, narrowed, limit, offset)
            total = rows.count_records(conn, narrowed)
            tags = rows.tag_counts(conn, scope, tag_limit)
        return RecordPage(tuple(records), total, tuple(tags))
