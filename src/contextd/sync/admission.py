"""Holding a bundle to the rules of a CLI write before any of it is merged.

Every entry is checked: ids and slugs in their formats, each record through the same
validation as `contextd add` (lengths, sizes, NUL, secrets), the other texts it carries too,
no date beyond a small clock skew into the future, nothing listed twice, supersede links that
make sense. What an import may claim is capped: every record it brings is of origin `import`.
Refusals are collected, so the one error names the first reason and counts the others.
"""

import re
from datetime import UTC, datetime

from msgspec.structs import replace

from contextd.clock import CLOCK_SKEW, is_stamp
from contextd.core.writing.admission import FROM_ANOTHER_STORE, admit_record, check_stamp
from contextd.core.writing.validation import checked_text
from contextd.errors import InvalidInputError, ValidationError, as_clause
from contextd.ids import is_id, is_slug
from contextd.sync.bundle import Bundle, BundleProject, BundleRecord, BundleTombstone

__all__ = ["Refusals", "admit_bundle", "record_where"]

MAX_NAME = 200
MAX_REMOTE = 500
_STORE_ID = re.compile(r"[0-9A-Za-z-]{8,64}")


class Refusals:
    """The entries of one bundle refused so far; raised as one error naming the first."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.reasons: list[str] = []

    def add(self, where: str, why: str) -> None:
        self.reasons.append(f"{where} {why.rstrip('.')}")

    def raise_if_any(self) -> None:
        """Raises:
        InvalidInputError: the first refusal, how many others there were, nothing imported.
        """
        if not self.reasons:
            return
        others = len(self.reasons) - 1
        tail = (
            f"; {others} other {'entry was' if others == 1 else 'entries were'} refused too"
            if others
            else ""
        )
        raise InvalidInputError(f"{self.source}: {self.reasons[0]}{tail}; nothing was imported.")


def record_where(index: int, record_id: str) -> str:
    return f"record {index + 1} ({record_id})"


def admit_bundle(bundle: Bundle, source: str, *, now: datetime | None = None) -> Bundle:
    """`bundle` with every record cleaned as a CLI write cleans it and its origin capped.

    Raises:
        InvalidInputError: an entry breaks a rule; the message names the first and counts the
            others, and nothing of the bundle may be imported.
    """
    refusals = Refusals(source)
    dates = _Dates(refusals, now or datetime.now(UTC))
    _bundle_fields(bundle, refusals, dates)
    project_ids = _projects(bundle.projects, refusals, dates)
    project_ids |= _groups(bundle, project_ids, refusals, dates)
    records = [_record(i, e, project_ids, refusals, dates) for i, e in enumerate(bundle.records)]
    _tombstones(bundle.tombstones, project_ids, refusals, dates)
    _repeats(bundle, refusals)
    refusals.raise_if_any()
    return replace(bundle, records=tuple(r for r in records if r is not None))


class _Dates:
    """Checks stamps: the store's own format, and not later than `latest`."""

    def __init__(self, refusals: Refusals, now: datetime) -> None:
        self.refusals = refusals
        self.now = now
        self.latest = now + CLOCK_SKEW

    def check(self, where: str, name: str, value: str) -> bool:
        try:
            check_stamp(name, value, self.latest)
        except ValidationError as exc:
            self.refusals.add(where, f"is refused: {as_clause(exc)}")
            return False
        return True


def _bundle_fields(bundle: Bundle, refusals: Refusals, dates: _Dates) -> None:
    if not _STORE_ID.fullmatch(bundle.store_id):
        refusals.add("the bundle", "has a store id that is not one contextd writes")
    if not is_stamp(bundle.exported_at):
        refusals.add("the bundle", 'has an "exported_at" not in the store\'s date form')
    if bundle.host is not None:
        _text(refusals, "the bundle", "host", bundle.host, MAX_NAME)


def _projects(
    projects: tuple[BundleProject, ...], refusals: Refusals, dates: _Dates, noun: str = "project"
) -> set[str]:
    for index, project in enumerate(projects):
        where = f"{noun} {index + 1} ({_clip(project.slug)})"
        if not is_id(project.id):
            refusals.add(where, "has an id that is not a contextd id")
        if not is_slug(project.slug):
            refusals.add(
                where,
                "has a slug that is not lower-case letters, digits and single hyphens (at most 64)",
            )
        _text(refusals, where, "name", project.name, MAX_NAME)
        if project.git_remote is not None:
            _text(refusals, where, "git remote", project.git_remote, MAX_REMOTE)
            if any(c.isspace() for c in project.git_remote):
                refusals.add(where, "has a git remote with spaces in it")
        dates.check(where, "created_at", project.created_at)
        dates.check(where, "updated_at", project.updated_at)
    return {p.id for p in projects}


def _text(refusals: Refusals, where: str, label: str, value: str, limit: int) -> None:
    try:
        checked_text(label, value, label=label, limit=limit, one_line=True)
    except ValidationError as exc:
        refusals.add(where, as_clause(exc))


def _record(
    index: int, entry: BundleRecord, project_ids: set[str], refusals: Refusals, dates: _Dates
) -> BundleRecord | None:
    record = entry.record
    where = record_where(index, record.id if is_id(record.id) else "with a malformed id")
    if record.project_id is not None and record.project_id not in project_ids:
        refusals.add(where, "names a project the bundle does not list")
        return None
    for version in entry.history:
        if not dates.check(where, "history", version):
            return None
    try:
        cleaned = admit_record(record, FROM_ANOTHER_STORE, now=dates.now)
    except ValidationError as exc:
        refusals.add(where, f"is refused: {as_clause(exc)}")
        return None
    return BundleRecord(cleaned, entry.history)


def _tombstones(
    tombstones: tuple[BundleTombstone, ...],
    project_ids: set[str],
    refusals: Refusals,
    dates: _Dates,
) -> None:
    for index, tombstone in enumerate(tombstones):
        where = f"deletion {index + 1} ({tombstone.id if is_id(tombstone.id) else 'a bad id'})"
        if not is_id(tombstone.id):
            refusals.add(where, "names a record by an id that is not a contextd id")
        if tombstone.project_id is not None and tombstone.project_id not in project_ids:
            refusals.add(where, "names a project the bundle does not list")
        dates.check(where, "deleted_at", tombstone.deleted_at)


def _groups(bundle: Bundle, project_ids: set[str], refusals: Refusals, dates: _Dates) -> set[str]:
    """Groups are checked as projects are; each member must be one of the bundle's projects."""
    as_projects = tuple(
        BundleProject(g.id, g.slug, g.name, None, g.created_at, g.updated_at) for g in bundle.groups
    )
    for index, group in enumerate(bundle.groups):
        where = f"group {index + 1} ({_clip(group.slug)})"
        if any(member not in project_ids for member in group.members):
            refusals.add(where, "names a member project the bundle does not list")
    found = _projects(as_projects, refusals, dates, noun="group")
    if found & project_ids:
        refusals.add("the bundle", "lists the same id as a project and as a group")
    return found


def _repeats(bundle: Bundle, refusals: Refusals) -> None:
    """An id (or slug) listed twice: the bundle contradicts itself."""
    for noun, values in (
        ("project id", [p.id for p in bundle.projects]),
        ("project slug", [p.slug for p in bundle.projects] + [g.slug for g in bundle.groups]),
        ("record id", [e.record.id for e in bundle.records]),
        ("deletion", [t.id for t in bundle.tombstones]),
    ):
        seen: set[str] = set()
        for value in values:
            if value in seen:
                refusals.add("the bundle", f"lists the {noun} {_clip(value)} twice")
            seen.add(value)
    deleted = {t.id for t in bundle.tombstones}
    for entry in bundle.records:
        if entry.record.id in deleted:
            refusals.add("the bundle", f"both carries and deletes record {entry.record.id}")


def _clip(value: str, width: int = 40) -> str:
    shown = value if len(value) <= width else value[: width - 1] + "…"
    return repr(shown)
