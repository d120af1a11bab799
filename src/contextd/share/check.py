"""The rules a record file must pass to be taken in, the same a CLI write passes and a bundle
entry passes: its fields, sizes and secrets, an id matching its name, links that are ids, dates
in the store's form and not in the future. Shared by the ingest and the pre-commit check."""

from datetime import UTC, datetime

from contextd.clock import CLOCK_SKEW, is_stamp, parse_instant
from contextd.core.writing.validation import validate_record
from contextd.errors import ValidationError
from contextd.ids import is_id
from contextd.models import Record
from contextd.share.format import FormatError, parse_record

__all__ = ["check_file"]


def check_file(name: str, data: bytes) -> tuple[Record | None, str | None]:
    """The record file `name` holds, cleaned as a CLI write cleans it, or why it must be
    refused."""
    try:
        record = parse_record(data.decode("utf-8"))
    except UnicodeDecodeError:
        return None, "it is not UTF-8 text"
    except FormatError as exc:
        return None, f"{exc}"
    if not is_id(record.id) or name != f"{record.id}.md":
        return None, f"it must hold the record its name gives ({name} is not named by its id)"
    if not all(is_id(link) for link in (record.superseded_by, *record.related_to) if link):
        return None, "it links to something that is not a record id"
    latest = datetime.now(UTC) + CLOCK_SKEW
    for field in ("created_at", "updated_at", "verified_at"):
        stamp = getattr(record, field)
        if not is_stamp(stamp):
            return None, f"its {field} is not in the form 2026-01-31T12:00:00.000Z"
        if parse_instant(stamp) > latest:
            return None, f"its {field} lies in the future; check the clock that wrote it"
    try:
        return validate_record(record), None
    except ValidationError as exc:
        return None, f"{exc}"
