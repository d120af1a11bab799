"""The rules a record file must pass to be taken in, the same a CLI write passes: its
fields, sizes and secrets, an id matching its name, links that are ids, no date in the
future. Shared by the ingest and the pre-commit check."""

import re
from datetime import UTC, datetime, timedelta

from msgspec.structs import replace

from contextd.clock import parse_instant
from contextd.core.validation import validate_draft
from contextd.errors import ValidationError
from contextd.models import Record, RecordDraft
from contextd.share.format import FormatError, parse_record

__all__ = ["check_file"]

_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_CLOCK_SKEW = timedelta(days=1)


def check_file(name: str, data: bytes) -> tuple[Record | None, str | None]:
    """The record file `name` holds, cleaned as a CLI write cleans it, or why it must be
    refused: not a record, a name that is not its id, a link that is not an id, a date in the
    future, or a field (a secret included) that breaks the record rules."""
    try:
        record = parse_record(data.decode("utf-8"))
    except UnicodeDecodeError:
        return None, "it is not UTF-8 text"
    except FormatError as exc:
        return None, f"{exc}"
    if not _ID.match(record.id) or name != f"{record.id}.md":
        return None, f"it must hold the record its name gives ({name} holds id {record.id!r})"
    for link in (record.superseded_by, *record.related_to):
        if link is not None and not _ID.match(link):
            return None, f"it links to {link!r}, which is not a record id"
    try:
        _check_dates(record)
        draft = validate_draft(
            RecordDraft(
                kind=record.kind,
                title=record.title,
                body=record.body,
                category=record.category,
                tags=record.tags,
                retrieval_hints=record.retrieval_hints,
                origin=record.origin,
                priority=record.priority,
            )
        )
    except ValidationError as exc:
        return None, f"{exc}"
    return replace(
        record,
        title=draft.title,
        body=draft.body,
        category=draft.category,
        tags=draft.tags,
        retrieval_hints=draft.retrieval_hints,
    ), None


def _check_dates(record: Record) -> None:
    latest = datetime.now(UTC) + _CLOCK_SKEW
    for field in ("created_at", "updated_at", "verified_at"):
        try:
            moment = parse_instant(getattr(record, field))
        except ValueError:
            raise ValidationError(field, f"Its {field} is not an ISO-8601 time.") from None
        if moment > latest:
            raise ValidationError(field, f"Its {field} lies in the future.")
