"""SQL for records of every kind, their tombstones, and listings by project scope."""

import json
from collections.abc import Sequence
from enum import StrEnum
from typing import Any, TypeVar

from msgspec import Struct

from contextd.models import Body, Kind, Origin, Record, Status, body_from_dict, body_to_dict
from contextd.storage import handles, owners, record_log
from contextd.storage.connection import Connection
from contextd.storage.filters import RecordFilter
from contextd.storage.fulltext import word_variants

__all__ = [
    "chain_end",
    "count_by_kind",
    "delete_record",
    "forward_links",
    "get_record",
    "insert_record",
    "linking",
    "list_records",
    "naming",
    "outdated_text",
    "record_from_row",
    "RecordHead",
    "heads_by_priority",
    "heads_in_scope",
    "records_in_scope",
    "replace_record",
    "same_title",
    "search_text",
    "successors_of",
    "titles_in_scope",
    "tombstone_of",
]

COLUMNS = (
    "id, project_id, kind, title, body, category, tags, retrieval_hints, origin, priority, "
    "status, superseded_by, related_to, session_id, created_at, updated_at, verified_at, "
    "archived_reason"
)
_PLACEHOLDERS = ", ".join("?" for _ in COLUMNS.split(","))


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


def _body_text(record: Record) -> str:
    """What the index holds as the body: its words, then the other spellings of the
    compounds and cited records of its title, body and hints (fulltext.word_variants)."""
    text = search_text(record)
    variants = word_variants("\n".join([record.title, text, *record.retrieval_hints]))
    return f"{text}\n{' '.join(variants)}" if variants else text


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


def insert_record(
    conn: Connection, record: Record, *, private: bool = False, handle: str | None = None
) -> None:
    """Store a new record; `private` ones never reach repository files (shared = 2), and on a
    team server a personal one (owners.personal) belongs to the connection's developer. It
    gets its handle for good (handles.next_handle), or keeps `handle` (a restored record)."""
    values = _row_values(record)
    body_text = _body_text(record)
    dialect = conn.dialect
    extra = conn.full_text.indexed_columns(_indexed(values, body_text))
    columns = "".join(f", {name}" for name, _, _ in extra)
    marks = "".join(f", {mark}" for _, mark, _ in extra)
    owner = owners.owner_of(dialect, record.kind, record.project_id, record.category, private)
    handle = handle or handles.next_handle(conn, record.kind)
    conn.execute(
        f"INSERT INTO records({COLUMNS}, body_text, shared, owner, handle{columns}) "
        f"VALUES ({_PLACEHOLDERS}, ?, ?, ?, ?{marks})",
        (*values, body_text, 2 if private else 0, owner, handle, *(v for _, _, v in extra)),
    )
    gone = conn.execute("SELECT 1 FROM tombstones WHERE id = ?", (record.id,)).fetchone()
    event = "restored" if gone else "created"
    facts = record_log.RowFacts(owner, handle, private)
    record_log.note(conn, record.id, record.updated_at, event, facts, None)


def replace_record(conn: Connection, record: Record) -> None:
    """Write every field of an existing record (the full-text index follows text changes)."""
    values = _row_values(record)
    body_text = _body_text(record)
    extra = conn.full_text.indexed_columns(_indexed(values, body_text))
    assignments = ", ".join(
        f"{name} = ?" for name in [n.strip() for n in COLUMNS.split(",")[1:]] + ["body_text"]
    )
    assignments += "".join(f", {name} = {mark}" for name, mark, _ in extra)
    before = conn.execute(
        f"SELECT {COLUMNS}, {_FACTS} FROM records WHERE id = ?", (record.id,)
    ).fetchone()
    conn.execute(
        f"UPDATE records SET {assignments} WHERE id = ?",
        (*values[1:], body_text, *(value for _, _, value in extra), record.id),
    )
    if before is not None:
        prior = record_from_row(before[:-3])
        event = record_log.event_of(prior, record)
        if event is not None:
            facts = _row_facts(before[-3:])
            record_log.note(conn, record.id, record.updated_at, event, facts, prior)


# What the records row holds beside the record, which its log keeps (record_log.RowFacts).
_FACTS = "owner, handle, shared"


def _row_facts(values: Sequence[object]) -> record_log.RowFacts:
    owner, handle, shared = values
    return record_log.RowFacts(str(owner), None if handle is None else str(handle), shared == 2)


def outdated_text(conn: Connection) -> list[Record]:
    """Records whose indexed text an older contextd wrote (without today's other spellings,
    say); replace_record writes it again."""
    rows = conn.execute(f"SELECT {COLUMNS}, body_text FROM records").fetchall()
    records = [(record_from_row(row[:-1]), row[-1]) for row in rows]
    return [record for record, stored in records if stored != _body_text(record)]


def _indexed(values: tuple[object, ...], body_text: str) -> tuple[str, str, str, str]:
    """The texts full-text search indexes (title, body words, tags and hints as JSON), as
    SQLite's FTS5 triggers read them from the row."""
    return str(values[3]), body_text, str(values[6]), str(values[7])


def get_record(conn: Connection, record_id: str) -> Record | None:
    """The record with this id, if there is one its connection's developer may see."""
    visible, shown = conn.dialect.visible("records")
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


def titles_in_scope(
    conn: Connection, ids: Sequence[str], scope: RecordFilter
) -> dict[str, tuple[str, str]]:
    """The kind and title of those of `ids` that exist and pass `scope`, by id."""
    return {str(r[0]): (str(r[1]), str(r[2])) for r in _by_ids(conn, "id, kind, title", ids, scope)}


def heads_by_priority(conn: Connection, scope: RecordFilter, limit: int) -> dict[str, RecordHead]:
    """Heads of the records in `scope`, highest priority first, then most recently verified
    (at most `limit`)."""
    where, params = scope.where(conn.dialect)
    selected = ", ".join(f"records.{name.strip()}" for name in _HEAD_COLUMNS.split(","))
    found = conn.execute(
        f"SELECT {selected} FROM records WHERE {where} "
        "ORDER BY records.priority DESC, records.verified_at DESC, records.id DESC LIMIT ?",
        (*params, limit),
    )
    heads = (_head(row) for row in found)
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
    dialect = conn.dialect
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
    dialect = conn.dialect
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
    where, params = scope.where(conn.dialect)
    order = "ASC" if oldest_first else "DESC"
    sql = f"SELECT {COLUMNS} FROM records WHERE {where} ORDER BY created_at {order}, id {order}"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return [record_from_row(row) for row in conn.execute(sql, params)]


def count_by_kind(conn: Connection, scope: RecordFilter) -> dict[Kind, int]:
    where, params = scope.where(conn.dialect)
    rows = conn.execute(f"SELECT kind, count(*) FROM records WHERE {where} GROUP BY kind", params)
    return {Kind(kind): count for kind, count in rows}


def successors_of(conn: Connection, record_id: str) -> list[str]:
    """Ids of records that name `record_id` as their successor."""
    visible, shown = conn.dialect.visible("records")
    found = conn.execute(
        f"SELECT id FROM records WHERE superseded_by = ? AND {visible}", (record_id, *shown)
    )
    return [r[0] for r in found]


def same_title(conn: Connection, record: Record) -> Record | None:
    """A stored record of the same scope whose title equals `record`'s, ignoring case: of the
    same kind, or a superseded one of any kind (a fact the team moved away from must not come
    back as a memory or a constraint either); one of the same kind first."""
    dialect = conn.dialect
    visible, shown = dialect.visible("records")
    kinds = [str(kind) for kind in Kind]
    row = conn.execute(
        f"SELECT {COLUMNS} FROM records WHERE kind IN ({', '.join('?' for _ in kinds)}) "
        f"AND project_id {dialect.null_safe_eq} ? AND lower(title) = lower(?) AND id != ? "
        f"AND (kind = ? OR status = ?) AND {visible} "
        "ORDER BY CASE WHEN kind = ? THEN 0 ELSE 1 END LIMIT 1",
        (
            *kinds,
            record.project_id,
            record.title,
            record.id,
            str(record.kind),
            str(Status.SUPERSEDED),
            *shown,
            str(record.kind),
        ),
    ).fetchone()
    return record_from_row(row) if row else None


def chain_end(
    conn: Connection, superseded_by: str | None, max_steps: int = 50
) -> RecordHead | None:
    """The last record of a supersede chain starting at `superseded_by` (None if a link
    points nowhere)."""
    current = None
    following = superseded_by
    visible, shown = conn.dialect.visible("records")
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


def linking(conn: Connection, record_id: str) -> list[Record]:
    """The records whose `related_to` names `record_id` (that its developer may see)."""
    has = conn.dialect.json_list_has("records.related_to")
    visible, shown = conn.dialect.visible("records")
    found = conn.execute(
        f"SELECT {COLUMNS} FROM records WHERE {has} AND {visible}", (record_id, *shown)
    )
    return [record_from_row(row) for row in found]


def forward_links(conn: Connection, old_id: str, new_id: str) -> int:
    """Point every link to `old_id` at `new_id` instead: related ids (a record never links to
    itself), supersede links and learned answers. Returns how many records changed."""
    has = conn.dialect.json_list_has("records.related_to")
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
    """Remove a record, leave a tombstone, and drop links other records held to it (each
    change logged at `deleted_at`, so a restore can put the links back)."""
    facts = conn.execute(f"SELECT {_FACTS} FROM records WHERE id = ?", (record.id,)).fetchone()
    conn.execute("DELETE FROM records WHERE id = ?", (record.id,))
    conn.execute(
        "INSERT INTO tombstones(id, project_id, deleted_at) VALUES (?, ?, ?) "
        "ON CONFLICT(id) DO UPDATE SET deleted_at = excluded.deleted_at",
        (record.id, record.project_id, deleted_at),
    )
    if facts is not None:
        record_log.note(conn, record.id, deleted_at, "deleted", _row_facts(facts), record)
    linked = conn.execute(
        f"SELECT {COLUMNS}, {_FACTS} FROM records WHERE {conn.dialect.json_list_has('related_to')}",
        (record.id,),
    ).fetchall()
    for row in linked:
        other = record_from_row(row[:-3])
        kept = [item for item in other.related_to if item != record.id]
        conn.execute("UPDATE records SET related_to = ? WHERE id = ?", (json.dumps(kept), other.id))
        record_log.note(conn, other.id, deleted_at, "relinked", _row_facts(row[-3:]), other)
