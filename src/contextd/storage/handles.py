"""Record handles: a kind letter and a number (D12, C3, M40) that a person reads and types.

Numbers count up per kind across the store (record_handles) and are never given twice, a
deleted record's included, so a handle names one record from the moment it is printed,
whatever is written after it. Handles are this store's names: records that arrive from
elsewhere are numbered on arrival, and only ids travel.
"""

import json
from collections.abc import Iterable

from contextd.models import Kind
from contextd.storage.connection import Connection

__all__ = ["LETTERS", "handles_of", "next_handle", "record_with_handle"]

LETTERS: dict[Kind, str] = {
    Kind.MEMORY: "M",
    Kind.DECISION: "D",
    Kind.CONSTRAINT: "C",
    Kind.PIPELINE: "P",
    Kind.CHECKPOINT: "K",
}


def next_handle(conn: Connection, kind: Kind) -> str:
    """The handle of a record of `kind` about to be stored (inside the write's transaction,
    whose row lock on the counter keeps two writers from drawing the same number)."""
    row = conn.execute(
        "INSERT INTO record_handles(kind, last) VALUES (?, 1) "
        "ON CONFLICT (kind) DO UPDATE SET last = record_handles.last + 1 RETURNING last",
        (kind.value,),
    ).fetchone()
    assert row is not None  # RETURNING always gives the row it wrote
    return f"{LETTERS[kind]}{row[0]}"


def record_with_handle(conn: Connection, handle: str) -> str | None:
    """The id of the record (this connection's developer may see) with this handle, in any
    letter case."""
    visible, shown = conn.dialect.visible("records")
    row = conn.execute(
        f"SELECT id FROM records WHERE handle = ? AND {visible}", (handle.upper(), *shown)
    ).fetchone()
    return None if row is None else str(row[0])


def handles_of(conn: Connection, ids: Iterable[str]) -> dict[str, str]:
    """The handle of each of `ids` that is a stored record."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return {}
    dialect = conn.dialect
    rows = conn.execute(
        f"SELECT records.id, records.handle FROM {dialect.json_rows('?', 'wanted')} "
        f"{dialect.index_join} records ON records.id = wanted.value "
        "WHERE records.handle IS NOT NULL",
        (json.dumps(wanted),),
    )
    return {str(rid): str(handle) for rid, handle in rows}
