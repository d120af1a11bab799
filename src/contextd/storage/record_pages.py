"""SQL for browsing records a page at a time: one page of a filtered listing, its total, and
the tags used in it (for a person scrolling a large store, as the web view does)."""

from contextd.models import Record
from contextd.storage.connection import Connection
from contextd.storage.filters import RecordFilter
from contextd.storage.records import COLUMNS, record_from_row

__all__ = ["count_records", "page_of_records", "tag_counts"]


def page_of_records(conn: Connection, scope: RecordFilter, limit: int, offset: int) -> list[Record]:
    """Newest first: `limit` records of `scope` after skipping `offset`."""
    where, params = scope.where(conn.dialect)
    sql = (
        f"SELECT {COLUMNS} FROM records WHERE {where} "
        "ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?"
    )
    return [record_from_row(row) for row in conn.execute(sql, [*params, limit, offset])]


def count_records(conn: Connection, scope: RecordFilter) -> int:
    where, params = scope.where(conn.dialect)
    return int(conn.execute(f"SELECT count(*) FROM records WHERE {where}", params).fetchone()[0])


def tag_counts(conn: Connection, scope: RecordFilter, limit: int) -> list[tuple[str, int]]:
    """The tags of `scope`'s records with how many carry each, most used first."""
    dialect = conn.dialect
    where, params = scope.where(dialect)
    sql = (
        f"SELECT tag.value, count(*) FROM records, {dialect.json_rows('records.tags', 'tag')} "
        f"WHERE {where} GROUP BY tag.value ORDER BY count(*) DESC, tag.value LIMIT ?"
    )
    return [(str(tag), int(n)) for tag, n in conn.execute(sql, [*params, limit])]
