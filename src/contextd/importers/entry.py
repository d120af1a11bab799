"""What every importer reads a source into: one entry per record, in the source's own terms
(its ids, its links, its lifecycle), before any of it is checked or stored."""

from datetime import UTC, datetime
from enum import StrEnum

from msgspec import Struct

from contextd.clock import CLOCK_SKEW, parse_instant, to_iso
from contextd.errors import InvalidInputError
from contextd.models import RecordDraft

__all__ = ["SourceEntry", "SourceStatus", "source_instant"]


class SourceStatus(StrEnum):
    """Where an entry stood in its source; the successor, if any, is named beside it."""

    ACTIVE = "active"
    SUPERSEDED = "superseded"  # replaced by a newer entry: kept as history, NOT CURRENT
    ARCHIVED = "archived"  # retired (with a successor when it was merged into one)
    PROPOSED = "proposed"  # not decided yet: held for a person's review, never current truth


class SourceEntry(Struct, frozen=True):
    """One entry of a source, mapped to a record draft (origin `import`) plus what only
    becomes an id once the whole source is read: its lifecycle links and relations."""

    source_id: str  # the source's own id ("dec-001", a note's name)
    where: str  # the file it came from, for messages
    draft: RecordDraft
    status: SourceStatus = SourceStatus.ACTIVE
    successor: str | None = None  # the source id of the entry that replaced it
    related: tuple[str, ...] = ()  # source ids it links to
    verified_at: str | None = None  # store-format instants, as the source dated them
    updated_at: str | None = None
    archived_reason: str | None = None
    # What names the entry across edits of its source, also one of its draft's retrieval
    # hints ("ADR-14"): a stored import holding it is this entry, even retitled.
    identity: str | None = None


def source_instant(value: str | None, where: str, field: str) -> str | None:
    """A date or instant from a source in the store's format (a bare date is midnight UTC).

    Raises:
        InvalidInputError: it is not an ISO date or time (the value is not echoed: a hand-edited
            file may hold anything there), or it lies in the future.
    """
    if value is None or not value.strip():
        return None
    try:
        moment = parse_instant(value.strip()).astimezone(UTC)
    except (ValueError, OverflowError):
        raise InvalidInputError(
            f"{where}: {field} is not an ISO date or time (like 2026-09-14); fix it in the "
            "source, then run the import again."
        ) from None
    if moment > datetime.now(UTC) + CLOCK_SKEW:
        raise InvalidInputError(
            f"{where}: {field} lies in the future; check the clock that wrote it, fix the date "
            "in the source, then run the import again."
        )
    return to_iso(moment)
