"""SQL for records of every kind, their tombstones, and listings by project scope."""

import json
from collections.abc import Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

from msgspec import Struct

from contextd.models import Body, Kind, Origin, Record, Status, body_from_dict, body_to_dict
from contextd.storage import owners
from contextd.storage.connection import Connection, dialect_of

if TYPE_CHECKING:
    from contextd.storage.dialect import Dialect

__all__ = [
    "RecordFilter",
    "chain_end",
    "count_by_kind",
    "delete_record",
    "forward_links",
    "get_record",
    "insert_record",
    "list_records",
    "naming",
    "record_from_row",
    "RecordHead",
    "heads_in_scope",
    "records_in_scope",
    "replace_record",
    "same_title",
    "search_text",
    "successors_of",
    "tombstone_of",
]

COLUMNS = (
    "id, project_id, kind, title, body, category, tags, retrieval_hints, origin, priority, "
    "status, superseded_by, related_to, session_id, created_at, updated_at, verified_at, "
    "archived_reason"
)
_PLACEHOLDERS = ", ".join("?" for _ in COLUMNS.split(","))


class RecordFilter(Struct, frozen=True):
    """Which records a listing or search may return. `project_id` None means global only."""

    project_id: str | None
    kinds: tuple[Kind, ...] = ()
    statuses: tuple[Status, ...] = (Status.ACTIVE,)
    tags: tuple[str, ...] = ()
    category: str | None = None
    since: str | None = None
    before: str | None = None
    dates_by: str = "created"  # or "verified": which time since/before compare with
    every_project: bool = False  # maintenance only: ignore the project scope
    # The checkout (attached work tree) whose view applies: a shared record is seen only when
    # one of that checkout's files holds it. None: every shared record of the project.
    checkout: str | None = None
    # Whose checkpoints count: a checkpoint made in another developer's session is left out
    # (where *this* developer's work stopped). None: everyone's.
    developer: str | None = None

    @property
    def within_scope_index(self) -> bool:
        """Whether where() tests only columns that the index records_seq_scope holds."""
        return not (self.tags or self.category or self.since or self.before)

    def where(self, dialect: "Dialect", alias: str = "records") -> tuple[str, list[object]]:
        """SQL condition and parameters for this filter, in `dialect`."""
        clauses = ["1 = 1"]
        params: list[object] = []
        if not self.every_project:
            clauses = [f"({alias}.project_id = ? OR {alias}.project_id IS NULL)"]
            params = [self.project_id]
        visible, shown = dialect.visible("records", alias)
        clauses.append(visible)
        params.extend(shown)
        if self.statuses:
            clauses.append(f"{alias}.status IN ({', '.join('?' for _ in self.statuses)})")
            params.extend(str(s) for s in self.statuses)
        if self.kinds:
            clauses.append(f"{alias}.kind IN ({', '.join('?' for _ in self.kinds)})")
            params.extend(str(k) for k in self.kinds)
        if self.category:
            clauses.append(f"{alias}.category = ?")
            params.append(self.category)
        moment = "verified_at" if self.dates_by == "verified" else "created_at"
        if self.since:
            clauses.append(f"{alias}.{moment} >= ?")
            params.append(self.since)
        if self.before:
            clauses.append(f"{alias}.{moment} < ?")
            params.append(self.before)
        for tag in self.tags:
            clauses.append(dialect.json_list_has(f"{alias}.tags"))
            params.append(tag)
        if self.checkout is not None:
            clauses.append(
                f"({alias}.shared != 1 OR EXISTS (SELECT 1 FROM shared_files f "
                f"WHERE f.record_id = {alias}.id AND f.checkout = ?))"
            )
            params.append(self.checkout)
        if self.developer is not None:
            clauses.append(
                f"({alias}.kind != 'checkpoint' OR {alias}.session_id IS NULL OR "
                f"{alias}.session_id IN (SELECT id FROM sessions WHERE developer = ?))"
            )
            params.append(self.developer)
        return " AND ".join(clauses), params


def search_text(record: Record) -> str:
    """The body's words as one text, indexed by FTS beside title, tags and hints."""
    parts: list[str] = []
    for value in body_to_dict(record.body).values():
        if isinstance(value, list):
            parts.extend(str(item) for item in value)
        elif value:
            parts.append(str(value))
    if record.category:
        parts.append(record.category)
    return "\n".join(parts)


def _row_values(record: Record) -> tuple[object, ...]:
    return (
        record.id,
        record.project_id,
        str(record.kind),
        record.title,
        json.dumps(body_to_dict(record.body), ensure_ascii=False),
        record.category,
        json.dumps(list(record.tags), ensure_ascii=False),
        json.dumps(list(record.retrieval_hints), ensure_ascii=False),
        str(record.origin),
        record.priority,
        str(record.status),
        record.superseded_by,
        json.dumps(list(record.related_to)),
        record.session_id,
        record.created_at,
        record.updated_at,
        record.verified_at,
        record.archived_reason,
    )


def record_from_row(row: Sequence[object]) -> Record:
    (
        record_id,
        project_id,
        kind,
        title,
        body,
        category,
        tags,
        hints,
        origin,
        priority,
        status,
        superseded_by,
        related_to,
        session_id,
        created,
        updated,
        verified,
        archived_reason,
    ) = row
    record_kind = _member(Kind, kind)
    parsed_body: Body = body_from_dict(record_kind, {} if body == "{}" else json.loads(str(body)))
    return Record(
        id=str(record_id),
        project_id=None if project_id is None else str(project_id),
        kind=record_kind,
        title=str(title),
        body=parsed_body,
        category=None if category is None else str(category),
        tags=_json_list(tags),
        retrieval_hints=_json_list(hints),
        origin=_member(Origin, origin),
        priority=int(str(priority)),
        status=_member(Status, status),
        superseded_by=None if superseded_by is None else str(superseded_by),
        related_to=_json_list(related_to),
        session_id=None if session_id is None else str(session_id),
        created_at=str(created),
        updated_at=str(updated),
        verified_at=str(verified),
        archived_reason=None if archived_reason is None else str(archived_reason),
    )


# Rows are decoded on every search: a dict lookup and an empty list's literal are several
# times cheaper than an enum call and a JSON parse.
_E = TypeVar("_E", bound=StrEnum)
_MEMBERS: dict[type[StrEnum], dict[object, StrEnum]] = {
    enum: {member.value: member for member in enum} for enum in (Kind, Origin, Status)
}


def _member(enum: type[_E], value: object) -> _E:
    found = _MEMBERS[enum].get(value)
    return found if isinstance(found, enum) else enum(str(value))


def _json_list(text: object) -> tuple[Any, ...]:
    return () if text == "[]" else tuple(json.loads(str(text)))


def insert_record(conn: Connection, record: Record, *, private: bool = False) -> None:
    """Store a new record; `private` ones never reach repository files (shared = 2), and on a
    team server a personal one (owners.personal) belongs to the connection's developer."""
    values = _row_values(record)
    body_text = search_text(record)
    dialect = dialect_of(conn)
    extra = dialect.fts_columns(_indexed(values, body_text))
    columns = "".join(f", {name}" for name, _, _ in extra)
    marks = "".join(f", {mark}" for _, mark, _ in extra)
    owner = owners.owner_of(dialect, record.kind, record.project_id, record.category, private)
    conn.execute(
        f"INSERT INTO records({COLUMNS}, body_text, shared, owner{columns}) "
        f"VALUES ({_PLACEHOLDERS}, ?, ?, ?{marks})",
        (*values, body_text, 2 if private else 0, owner, *(value for _, _, value in extra)),
    )


def replace_record(conn: Connection, record: Record) -> None:
    """Write every field of an existing record (the full-text index follows text changes)."""
    values = _row_values(record)
    body_text = search_text(record)
    extra = dialect_of(conn).fts_columns(_indexed(values, body_text))
    assignments = ", ".join(
        f"{name} = ?" for name in [n.strip() for n in COLUMNS.split(",")[1:]] + ["body_text"]
    )
    assignments += "".join(f", {name} = {mark}" for name, mark, _ in extra)
    conn.execute(
        f"UPDATE records SET {assignments} WHERE id = ?",
        (*values[1:], body_text, *(value for _, _, value in extra), record.id),
    )


def _indexed(values: tuple[object, ...], body_text: str) -> tuple[str, str, str, str]:
    """The texts full-text search indexes (title, body words, tags and hints as JSON), as
    SQLite's FTS5 triggers read them from the row."""
    return str(values[3]), body_text, str(values[6]), str(values[7])


def get_record(conn: Connection, record_id: str) -> Record | None:
    """The record with this id, if there is one its connection's developer may see."""
    visible, shown = dialect_of(conn).visible("records")
    row = conn.execute(
        f"SELECT {COLUMNS} FROM records WHERE id = ? AND {visible}", (record_id, *shown)
    ).fetchone()
    return record_from_row(row) if row else None


class RecordHead(Struct, frozen=True):
    """The fields ranking needs, read without parsing a record's JSON columns."""

    id: str
    project_id: str | None
    status: Status
    priority: int
    origin: Origin
    verified_at: str
    superseded_by: str | None


_HEAD_COLUMNS = "id, project_id, status, priority, origin, verified_at, superseded_by"


def _head(row: Sequence[object]) -> RecordHead:
    rid, project_id, status, priority, origin, verified, successor = row
    return RecordHead(
        str(rid),
        None if project_id is None else str(project_id),
        _member(Status, status),
        int(str(priority)),
        _member(Origin, origin),
        str(verified),
        None if successor is None else str(successor),
    )


def heads_in_scope(
    conn: Connection, ids: Sequence[str], scope: RecordFilter
) -> dict[str, RecordHead]:
    """Heads of those of `ids` that exist and pass `scope`, by id."""
    heads = (_head(row) for row in _by_ids(conn, _HEAD_COLUMNS, ids, scope))
    return {head.id: head for head in heads}


def records_in_scope(
    conn: Connection, ids: Sequence[str], scope: RecordFilter
) -> dict[str, Record]:
    """Those of `ids` that exist and pass `scope`, by id."""
    records = (record_from_row(row) for row in _by_ids(conn, COLUMNS, ids, scope))
    return {record.id: record for record in records}


def _by_ids(
    conn: Connection, columns: str, ids: Sequence[str], scope: RecordFilter
) -> list[Sequence[object]]:
    if not ids:
        return []  # no statement for nothing (a search's second look often has none)
    # Each listed id is looked up by its index instead of scanning the scope.
    dialect = dialect_of(conn)
    where, params = scope.where(dialect)
    selected = ", ".join(f"records.{name.strip()}" for name in columns.split(","))
    sql = (
        f"SELECT {selected} FROM {dialect.json_rows('?', 'wanted')} {dialect.index_join} "
        f"records ON records.id = wanted.value WHERE {where}"
    )
    return conn.execute(sql, (json.dumps(list(ids)), *params)).fetchall()


def naming(
    conn: Connection, needles: Sequence[str], scope: RecordFilter
) -> list[tuple[str, bool, list[str]]]:
    """Records in `scope` whose text holds one of `needles`, and constraints with a scope:
    (id, whether the text holds a needle, the constraint's scope globs)."""
    dialect = dialect_of(conn)
    where, params = scope.where(dialect)
    text = "records.title || ' ' || records.body_text || ' ' || records.retrieval_hints"
    held = " OR ".join(dialect.contains(text) for _ in needles) or "1 = 0"
    sql = (
        f"SELECT records.id, ({held}) AS named, records.kind, records.body "
        f"FROM records WHERE {where} AND (({held}) OR records.kind = 'constraint')"
    )
    found = []
    for record_id, named, kind, body in conn.execute(sql, (*needles, *params, *needles)):
        scope_globs = json.loads(body).get("scope", []) if kind == "constraint" else []
        if named or scope_globs:
            found.append((str(record_id), bool(named), list(scope_globs)))
    return found


def tombstone_of(conn: Connection, record_id: str) -> str | None:
    """When the record was deleted, if it was."""
    row = conn.execute("SELECT deleted_at FROM tombstones WHERE id = ?", (record_id,)).fetchone()
    return str(row[0]) if row else None


def list_records(
    conn: Connection,
    scope: RecordFilter,
    *,
    oldest_first: bool = False,
    limit: int | None = None,
) -> list[Record]:
    where, params = scope.where(dialect_of(conn))
    order = "ASC" if oldest_first else "DESC"
    sql = f"SELECT {COLUMNS} FROM records WHERE {where} ORDER BY created_at {order}, id {order}"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return [record_from_row(row) for row in conn.execute(sql, params)]


def count_by_kind(conn: Connection, scope: RecordFilter) -> dict[Kind, int]:
    where, params = scope.where(dialect_of(conn))
    rows = conn.execute(f"SELECT kind, count(*) FROM records WHERE {where} GROUP BY kind", params)
    return {Kind(kind): count for kind, count in rows}


def successors_of(conn: Connection, record_id: str) -> list[str]:
    """Ids of records that name `record_id` as their successor."""
    visible, shown = dialect_of(conn).visible("records")
    found = conn.execute(
        f"SELECT id FROM records WHERE superseded_by = ? AND {visible}", (record_id, *shown)
    )
    return [r[0] for r in found]


def same_title(conn: Connection, record: Record) -> Record | None:
    """A stored record of the same kind and scope whose title equals `record`'s, ignoring case."""
    dialect = dialect_of(conn)
    visible, shown = dialect.visible("records")
    row = conn.execute(
        f"SELECT {COLUMNS} FROM records WHERE kind = ? "
        f"AND project_id {dialect.null_safe_eq} ? AND id != ? "
        f"AND lower(title) = lower(?) AND {visible} LIMIT 1",
        (str(record.kind), record.project_id, record.id, record.title, *shown),
    ).fetchone()
    return record_from_row(row) if row else None


def chain_end(
    conn: Connection, superseded_by: str | None, max_steps: int = 50
) -> RecordHead | None:
    """The last record of a supersede chain starting at `superseded_by` (None if a link
    points nowhere)."""
    current = None
    following = superseded_by
    visible, shown = dialect_of(conn).visible("records")
    for _ in range(max_steps):
        if following is None:
            return current
        row = conn.execute(
            f"SELECT {_HEAD_COLUMNS} FROM records WHERE id = ? AND {visible}", (following, *shown)
        ).fetchone()
        if row is None:
            return None
        current = _head(row)
        following = current.superseded_by
    return None


def forward_links(conn: Connection, old_id: str, new_id: str) -> int:
    """Point every link to `old_id` at `new_id` instead: related ids (a record never links to
    itself), supersede links and learned answers. Returns how many records changed."""
    has = dialect_of(conn).json_list_has("records.related_to")
    linked = conn.execute(f"SELECT id, related_to FROM records WHERE {has}", (old_id,)).fetchall()
    for other_id, related in linked:
        moved = [new_id if item == old_id else item for item in json.loads(related)]
        kept = [item for item in dict.fromkeys(moved) if item != other_id]
        conn.execute("UPDATE records SET related_to = ? WHERE id = ?", (json.dumps(kept), other_id))
    successors = conn.execute(
        "UPDATE records SET superseded_by = ? WHERE superseded_by = ? AND id != ?",
        (new_id, old_id, new_id),
    ).rowcount
    conn.execute("UPDATE feedback SET record_id = ? WHERE record_id = ?", (new_id, old_id))
    return len(linked) + successors


def delete_record(conn: Connection, record: Record, deleted_at: str) -> None:
    """Remove a record, leave a tombstone, and drop links other records held to it."""
    conn.execute("DELETE FROM records WHERE id = ?", (record.id,))
    conn.execute(
        "INSERT INTO tombstones(id, project_id, deleted_at) VALUES (?, ?, ?) "
        "ON CONFLICT(id) DO UPDATE SET deleted_at = excluded.deleted_at",
        (record.id, record.project_id, deleted_at),
    )
    linked = conn.execute(
        f"SELECT id, related_to FROM records WHERE {dialect_of(conn).json_list_has('related_to')}",
        (record.id,),
    ).fetchall()
    for other_id, related in linked:
        kept = [item for item in json.loads(related) if item != record.id]
        conn.execute("UPDATE records SET related_to = ? WHERE id = ?", (json.dumps(kept), other_id))
