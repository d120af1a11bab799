"""Ids typed as a prefix: lookup and the shortest unique prefix, for any table keyed by `id`."""

from collections.abc import Iterable
from typing import Literal

from contextd.storage.connection import Connection

__all__ = ["IdTable", "count_with_prefix", "ids_with_prefix", "shortest_unique_prefixes"]

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


def count_with_prefix(conn: Connection, table: IdTable, prefix: str) -> int:
    """How many ids of `table` this connection's developer may see start with `prefix`."""
    visible, shown = conn.dialect.visible(table)
    row = conn.execute(
        f"SELECT count(*) FROM {table} WHERE id >= ? AND id < ? AND {visible}",
        (prefix, prefix + "\uffff", *shown),
    ).fetchone()
    return int(row[0]) if row else 0


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
