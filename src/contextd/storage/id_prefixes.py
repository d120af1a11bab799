"""Ids typed as a prefix: lookup and the shortest unique prefix, for any table keyed by `id`;
and records' short ids, the prefix printed for each when it was stored, kept for good."""

import json
from collections.abc import Iterable
from typing import Literal

from contextd.storage.connection import Connection

__all__ = [
    "IdTable",
    "ids_with_prefix",
    "new_short_id",
    "record_with_short_id",
    "short_ids_of",
    "shortest_unique_prefixes",
]

IdTable = Literal["records", "sessions", "review_queue"]


def ids_with_prefix(conn: Connection, table: IdTable, prefix: str, limit: int = 6) -> list[str]:
    """Ids of `table` that start with `prefix` (at most `limit`), of rows this connection's
    developer may see."""
    visible, shown = conn.dialect.visible(table)
    return [
        row[0]
        for row in conn.execute(
            f"SELECT id FROM {table} WHERE id >= ? AND id < ? AND {visible} ORDER BY id LIMIT ?",
            (prefix, prefix + "\uffff", *shown, limit),
        )
    ]


def shortest_unique_prefixes(
    conn: Connection, table: IdTable, ids: Iterable[str], minimum: int
) -> dict[str, str]:
    """For each id, the shortest prefix (at least `minimum` long) no other id of `table`
    shares: only its two sorted neighbours can share more than any other id."""
    out: dict[str, str] = {}
    visible, shown = conn.dialect.visible(table)
    for item_id in ids:
        neighbours = [
            row[0]
            for row in conn.execute(
                f"SELECT * FROM (SELECT id FROM {table} WHERE id < ? AND {visible} "
                "ORDER BY id DESC LIMIT 1) AS lower_id UNION ALL "
                f"SELECT * FROM (SELECT id FROM {table} WHERE id > ? AND {visible} "
                "ORDER BY id LIMIT 1) AS higher_id",
                (item_id, *shown, item_id, *shown),
            )
        ]
        out[item_id] = _unique_prefix(item_id, neighbours, minimum)
    return out


def new_short_id(conn: Connection, record_id: str, minimum: int) -> str:
    """The short id of a record about to be stored: the shortest prefix (at least `minimum`
    long) no id already stored begins with, whoever's record it is. Written with the record,
    it names it for good: a record stored later gets a longer one than any prefix the two
    share (ids are time-ordered, so a burst of writes shares its first characters)."""
    neighbours = [
        row[0]
        for row in conn.execute(
            "SELECT * FROM (SELECT id FROM records WHERE id < ? ORDER BY id DESC LIMIT 1) "
            "AS lower_id UNION ALL "
            "SELECT * FROM (SELECT id FROM records WHERE id > ? ORDER BY id LIMIT 1) AS higher_id",
            (record_id, record_id),
        )
    ]
    return _unique_prefix(record_id, neighbours, minimum)


def record_with_short_id(conn: Connection, short_id: str) -> str | None:
    """The id of the record (this connection's developer may see) whose short id this is."""
    visible, shown = conn.dialect.visible("records")
    row = conn.execute(
        f"SELECT id FROM records WHERE short_id = ? AND {visible} LIMIT 1", (short_id, *shown)
    ).fetchone()
    return None if row is None else str(row[0])


def short_ids_of(conn: Connection, ids: Iterable[str]) -> dict[str, str]:
    """The stored short id of each of `ids` that has one."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return {}
    dialect = conn.dialect
    rows = conn.execute(
        f"SELECT records.id, records.short_id FROM {dialect.json_rows('?', 'wanted')} "
        f"{dialect.index_join} records ON records.id = wanted.value "
        "WHERE records.short_id IS NOT NULL",
        (json.dumps(wanted),),
    )
    return {str(rid): str(short) for rid, short in rows}


def _unique_prefix(item_id: str, neighbours: Iterable[str], minimum: int) -> str:
    shared = max((_common_prefix(item_id, other) for other in neighbours), default=0)
    length = max(minimum, shared + 1)
    if length < len(item_id) and item_id[length - 1] == "-":
        length += 1  # never end a short id on a dash
    return item_id[:length]


def _common_prefix(a: str, b: str) -> int:
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count
