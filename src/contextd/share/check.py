"""The rules a record file must pass to be taken in: the one rule for every record that
arrives whole (its fields, sizes and secrets, ids, links and dates; core.writing.admission),
held to what a teammate's word may claim, named by its id, and of a kind the project shares.
Shared by the ingest and the pre-commit check."""

from contextd.core.writing.admission import FROM_A_TEAMMATE, admit_record
from contextd.errors import ValidationError, as_clause
from contextd.ids import is_id
from contextd.models import Record
from contextd.share.format import FormatError, parse_record
from contextd.share.policy import SharePolicy

__all__ = ["check_file"]


def check_file(name: str, data: bytes, policy: SharePolicy) -> tuple[Record | None, str | None]:
    """The record file `name` holds, cleaned as a CLI write cleans it, or why it must be
    refused (a reason that never quotes the file's text)."""
    if not name.endswith(".md") or not is_id(name.removesuffix(".md")):
        return None, "its name is not a record id followed by .md"
    try:
        record = parse_record(data.decode("utf-8"))
    except UnicodeDecodeError:
        return None, "it is not UTF-8 text"
    except FormatError as exc:
        return None, f"{exc}"
    if name != f"{record.id}.md":
        return None, f"it must hold the record its name gives ({name} is not named by its id)"
    try:
        admitted = admit_record(record, FROM_A_TEAMMATE)
    except ValidationError as exc:
        return None, as_clause(exc)
    refusal = policy.refusal(admitted.kind, admitted.category)
    return (None, refusal) if refusal is not None else (admitted, None)
