"""The bundle: a versioned JSON document carrying projects, project groups (with their
members), records (with their supersede links, relations and exchanged versions) and
tombstones between stores. A bundle that carries a group is version 2, so that a contextd
without groups says to upgrade rather than refusing the group's records one by one.

Embeddings are not carried (each machine derives its own) and neither are sessions.
"""

import json
from typing import Any

from msgspec import Struct

from contextd.clock import parse_instant
from contextd.core.workspace.capped import MB, Cap
from contextd.errors import InvalidInputError, ValidationError
from contextd.models import (
    Group,
    Kind,
    Origin,
    Project,
    Record,
    Status,
    body_from_dict,
    body_to_dict,
)

__all__ = [
    "FORMAT",
    "VERSION",
    "Bundle",
    "BundleGroup",
    "BundleProject",
    "BundleRecord",
    "BundleTombstone",
    "bundle_cap",
    "dump_bundle",
    "group_entry",
    "project_entry",
    "parse_bundle",
    "parse_bundle_record",
    "record_to_json",
]

FORMAT = "contextd-bundle"
VERSION = 2
_WITHOUT_GROUPS = 1  # the version a bundle without groups is written as (older readers read it)


class BundleProject(Struct, frozen=True):
    id: str
    slug: str
    name: str
    git_remote: str | None
    created_at: str
    updated_at: str


class BundleGroup(Struct, frozen=True):
    """A project group; its records name it as their project. `members`: ids of the
    bundle's projects that belong to it (a one-project bundle names that project alone)."""

    id: str
    slug: str
    name: str
    created_at: str
    updated_at: str  # changes when its members do: the newer version's members win
    members: tuple[str, ...]


class BundleRecord(Struct, frozen=True):
    record: Record
    history: tuple[str, ...]  # exchanged versions (updated_at) this version descends from


class BundleTombstone(Struct, frozen=True):
    id: str
    project_id: str | None
    deleted_at: str


class Bundle(Struct, frozen=True):
    store_id: str
    exported_at: str
    projects: tuple[BundleProject, ...]
    records: tuple[BundleRecord, ...]
    tombstones: tuple[BundleTombstone, ...]
    host: str | None = None  # the machine it was exported on, to name it in conflicts
    groups: tuple[BundleGroup, ...] = ()


def bundle_cap(max_mb: int) -> Cap:
    """The most a bundle may hold (`sync.max_bundle_mb`), read from a file, stdin or ssh."""
    return Cap(
        max_mb * MB,
        "a bundle",
        "if it really is a bundle that large, allow more with "
        f"`contextd config set sync.max_bundle_mb {max_mb * 2}`",
    )


def project_entry(project: Project) -> BundleProject:
    return BundleProject(
        project.id,
        project.slug,
        project.name,
        project.git_remote,
        project.created_at,
        project.updated_at,
    )


def group_entry(group: Group, members: tuple[str, ...]) -> BundleGroup:
    return BundleGroup(
        group.id, group.slug, group.name, group.created_at, group.updated_at, members
    )


def record_to_json(record: Record, history: tuple[str, ...] = ()) -> dict[str, Any]:
    """Every field of a record except its (machine-local) session."""
    return {
        "id": record.id,
        "project_id": record.project_id,
        "kind": str(record.kind),
        "title": record.title,
        "body": body_to_dict(record.body),
        "category": record.category,
        "tags": list(record.tags),
        "retrieval_hints": list(record.retrieval_hints),
        "origin": str(record.origin),
        "priority": record.priority,
        "status": str(record.status),
        "superseded_by": record.superseded_by,
        "related_to": list(record.related_to),
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "verified_at": record.verified_at,
        "archived_reason": record.archived_reason,
        "history": list(history),
    }


def dump_bundle(bundle: Bundle) -> str:
    document = {
        "format": FORMAT,
        "version": VERSION if bundle.groups else _WITHOUT_GROUPS,
        "exported_at": bundle.exported_at,
        "store_id": bundle.store_id,
        "host": bundle.host,
        "projects": [
            {
                "id": p.id,
                "slug": p.slug,
                "name": p.name,
                "git_remote": p.git_remote,
                "created_at": p.created_at,
                "updated_at": p.updated_at,
            }
            for p in bundle.projects
        ],
        "records": [record_to_json(r.record, r.history) for r in bundle.records],
        **(
            {
                "groups": [
                    {
                        "id": g.id,
                        "slug": g.slug,
                        "name": g.name,
                        "created_at": g.created_at,
                        "updated_at": g.updated_at,
                        "members": list(g.members),
                    }
                    for g in bundle.groups
                ]
            }
            if bundle.groups
            else {}
        ),
        "tombstones": [
            {"id": t.id, "project_id": t.project_id, "deleted_at": t.deleted_at}
            for t in bundle.tombstones
        ],
    }
    return json.dumps(document, ensure_ascii=False)


def parse_bundle(text: str, source: str) -> Bundle:
    """Read and check a bundle; `source` names where it came from in error messages.

    Raises:
        InvalidInputError: not JSON, not a contextd bundle, written by a newer contextd, or
            an entry is malformed.
    """
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"{source} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "give a file written by `contextd bundle export`."
        ) from None
    except RecursionError:
        raise InvalidInputError(
            f"{source} nests its JSON deeper than any contextd bundle does; it is not a bundle "
            "written by `contextd bundle export`."
        ) from None
    _refuse_lone_surrogates(document, source)
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InvalidInputError(
            f'{source} is not a contextd bundle (it lacks "format": "{FORMAT}"); '
            "give a file written by `contextd bundle export`."
        )
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InvalidInputError(f"{source} has no valid bundle version; export it again.")
    if version > VERSION:
        raise InvalidInputError(
            f"{source} was written by a newer contextd (bundle version {version}, this one "
            f"reads up to {VERSION}); upgrade contextd on this machine to import it."
        )
    reader = _Reader(source)
    projects = tuple(reader.project(i, p) for i, p in enumerate(reader.items(document, "projects")))
    records = tuple(reader.record(i, r) for i, r in enumerate(reader.items(document, "records")))
    tombstones = tuple(
        reader.tombstone(i, t) for i, t in enumerate(reader.items(document, "tombstones"))
    )
    groups = tuple(reader.group(i, g) for i, g in enumerate(reader.items(document, "groups")))
    return Bundle(
        reader.text(document, "store_id", "the bundle"),
        reader.text(document, "exported_at", "the bundle"),
        projects,
        records,
        tombstones,
        reader.optional(document, "host", "the bundle"),
        groups,
    )


def _refuse_lone_surrogates(document: object, source: str) -> None:
    """JSON may escape half of a UTF-16 pair (\\ud800) alone: that is no character, and no
    text holding it can be stored or printed."""
    try:
        json.dumps(document, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(
            f"{source} holds an escaped half of a UTF-16 surrogate pair, which is not a "
            "character; the bundle is damaged, export it again."
        ) from None
    except RecursionError:
        raise InvalidInputError(
            f"{source} nests its JSON deeper than any contextd bundle does; it is not a bundle "
            "written by `contextd bundle export`."
        ) from None


def parse_bundle_record(text: str, source: str) -> BundleRecord:
    """One record entry, as stored beside a divergence."""
    entry = json.loads(text)
    if not isinstance(entry, dict):
        raise InvalidInputError(f"{source} is not a record entry.")
    return _Reader(source).record(0, entry)


class _Reader:
    """Typed field access that names the bundle and the entry in every complaint."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, what: str) -> InvalidInputError:
        return InvalidInputError(
            f"{self.source}: {where} {what}; the bundle is damaged, export it again."
        )

    def items(self, document: dict[str, Any], key: str) -> list[dict[str, Any]]:
        value = document.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.fail(f'"{key}"', "is not a list of objects")
        return value

    def text(self, entry: dict[str, Any], key: str, where: str) -> str:
        value = entry.get(key)
        if not isinstance(value, str) or not value:
            raise self.fail(where, f'has no text field "{key}"')
        return value

    def stamp(self, entry: dict[str, Any], key: str, where: str) -> str:
        value = self.text(entry, key, where)
        try:
            parse_instant(value)
        except ValueError:
            raise self.fail(where, f'has a "{key}" that is not an ISO date') from None
        return value

    def optional(self, entry: dict[str, Any], key: str, where: str) -> str | None:
        value = entry.get(key)
        if value is not None and not isinstance(value, str):
            raise self.fail(where, f'has a non-text "{key}"')
        return value

    def texts(self, entry: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
        value = entry.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(where, f'has a "{key}" that is not a list of texts')
        return tuple(value)

    def project(self, index: int, entry: dict[str, Any]) -> BundleProject:
        where = f"project {index + 1}"
        return BundleProject(
            self.text(entry, "id", where),
            self.text(entry, "slug", where),
            self.text(entry, "name", where),
            self.optional(entry, "git_remote", where),
            self.stamp(entry, "created_at", where),
            self.stamp(entry, "updated_at", where),
        )

    def group(self, index: int, entry: dict[str, Any]) -> BundleGroup:
        where = f"group {index + 1}"
        return BundleGroup(
            self.text(entry, "id", where),
            self.text(entry, "slug", where),
            self.text(entry, "name", where),
            self.stamp(entry, "created_at", where),
            self.stamp(entry, "updated_at", where),
            self.texts(entry, "members", where),
        )

    def tombstone(self, index: int, entry: dict[str, Any]) -> BundleTombstone:
        where = f"tombstone {index + 1}"
        return BundleTombstone(
            self.text(entry, "id", where),
            self.optional(entry, "project_id", where),
            self.stamp(entry, "deleted_at", where),
        )

    def record(self, index: int, entry: dict[str, Any]) -> BundleRecord:
        where = f"record {index + 1} ({entry.get('id', 'no id')})"
        body = entry.get("body", {})
        priority = entry.get("priority", 3)
        if not isinstance(body, dict):
            raise self.fail(where, 'has a "body" that is not an object')
        if not isinstance(priority, int) or isinstance(priority, bool):
            raise self.fail(where, 'has a "priority" that is not a number')
        try:
            kind = Kind(self.text(entry, "kind", where))
            record = Record(
                id=self.text(entry, "id", where),
                project_id=self.optional(entry, "project_id", where),
                kind=kind,
                title=self.text(entry, "title", where),
                body=body_from_dict(kind, body),
                category=self.optional(entry, "category", where),
                tags=self.texts(entry, "tags", where),
                retrieval_hints=self.texts(entry, "retrieval_hints", where),
                origin=Origin(entry.get("origin", "import")),
                priority=priority,
                status=Status(entry.get("status", "active")),
                superseded_by=self.optional(entry, "superseded_by", where),
                related_to=self.texts(entry, "related_to", where),
                session_id=None,
                created_at=self.stamp(entry, "created_at", where),
                updated_at=self.stamp(entry, "updated_at", where),
                verified_at=self.stamp(entry, "verified_at", where),
                archived_reason=self.optional(entry, "archived_reason", where),
            )
        except (ValueError, TypeError, ValidationError) as exc:
            raise self.fail(where, f"has a wrong value ({exc})") from None
        return BundleRecord(record, self.texts(entry, "history", where))
