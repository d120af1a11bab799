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

from contextd.clock import CLOCK_SKEW, is_stamp, parse_instant
from contextd.core.writing.validation import checked_text, validate_record
from contextd.errors import InvalidInputError, ValidationError
from contextd.ids import is_id, is_slug
from contextd.models import Origin, Record, Status
from contextd.sync.bundle import Bundle, BundleProject, BundleRecord, BundleTombstone

__all__ = ["Refusals", "admit_bundle", "record_where"]

MAX_RELATED = 50
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
    latest = (now or datetime.now(UTC)) + CLOCK_SKEW
    dates = _Dates(refusals, latest)
    _bundle_fields(bundle, refusals, dates)
    project_ids = _projects(bundle.projects, refusals, dates)
    records = [_record(i, e, project_ids, refusals, dates) for i, e in enumerate(bundle.records)]
    _tombstones(bundle.tombstones, project_ids, refusals, dates)
    _repeats(bundle, refusals)
    refusals.raise_if_any()
    return replace(bundle, records=tuple(r for r in records if r is not None))


class _Dates:
    """Checks stamps: the store's own format, and not later than `latest`."""

    def __init__(self, refusals: Refusals, latest: datetime) -> None:
        self.refusals = refusals
        self.latest = latest

    def check(self, where: str, name: str, value: str) -> bool:
        if not is_stamp(value):
            self.refusals.add(where, f'has a "{name}" not in the form 2026-01-31T12:00:00.000Z')
            return False
        if parse_instant(value) > self.latest:
            self.refusals.add(
                where,
                f'is dated in the future ("{name}" {value}); check the clock of the machine '
                "it came from",
            )
            return False
        return True


def _bundle_fields(bundle: Bundle, refusals: Refusals, dates: _Dates) -> None:
    if not _STORE_ID.fullmatch(bundle.store_id):
        refusals.add("the bundle", "has a store id that is not one contextd writes")
    if not is_stamp(bundle.exported_at):
        refusals.add("the bundle", 'has an "exported_at" not in the store\'s date form')
    if bundle.host is not None:
        _text(refusals, "the bundle", "host", bundle.host, MAX_NAME)


def _projects(projects: tuple[BundleProject, ...], refusals: Refusals, dates: _Dates) -> set[str]:
    for index, project in enumerate(projects):
        where = f"project {index + 1} ({_clip(project.slug)})"
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
        refusals.add(where, _lower_first(str(exc)))


def _record(
    index: int, entry: BundleRecord, project_ids: set[str], refusals: Refusals, dates: _Dates
) -> BundleRecord | None:
    record = entry.record
    where = record_where(index, record.id if is_id(record.id) else "with a malformed id")
    before = len(refusals.reasons)
    _links(where, record, refusals)
    if record.project_id is not None and record.project_id not in project_ids:
        refusals.add(where, "names a project the bundle does not list")
    for name in ("created_at", "updated_at", "verified_at"):
        dates.check(where, name, getattr(record, name))
    for version in entry.history:
        if not dates.check(where, "history", version):
            break
    try:
        cleaned = _validated(record)
    except ValidationError as exc:
        refusals.add(where, f"is refused: {_lower_first(str(exc))}")
        return None
    if len(refusals.reasons) > before:
        return None
    return BundleRecord(cleaned, entry.history)


def _links(where: str, record: Record, refusals: Refusals) -> None:
    if not is_id(record.id):
        refusals.add(where, "has an id that is not a contextd id")
    if record.project_id is not None and not is_id(record.project_id):
        refusals.add(where, "names a project by an id that is not a contextd id")
    related = record.related_to
    if not all(is_id(r) for r in related) or len(related) > MAX_RELATED:
        refusals.add(where, f"has related ids that are malformed or more than {MAX_RELATED}")
    if record.id in related:
        refusals.add(where, "is related to itself")
    successor = record.superseded_by
    if successor is not None and (not is_id(successor) or successor == record.id):
        refusals.add(where, "is superseded by a malformed id or by itself")
    if record.status is Status.SUPERSEDED and successor is None:
        refusals.add(where, "is superseded by nothing")
    if record.status is Status.ACTIVE and successor is not None:
        refusals.add(where, "is active yet superseded")


def _validated(record: Record) -> Record:
    """The record as a CLI write would store it (trimmed, normalised), of origin `import`.

    Raises:
        ValidationError: a field breaks its kind's rules or holds a secret.
    """
    reason = record.archived_reason
    if reason is not None:
        reason = checked_text("archived_reason", reason, label="archive reason") or None
    return replace(
        validate_record(record),
        related_to=tuple(dict.fromkeys(record.related_to)),
        origin=Origin.IMPORT,
        archived_reason=reason,
    )


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


def _repeats(bundle: Bundle, refusals: Refusals) -> None:
    """An id (or slug) listed twice: the bundle contradicts itself."""
    for noun, values in (
        ("project id", [p.id for p in bundle.projects]),
        ("project slug", [p.slug for p in bundle.projects]),
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


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text
