"""The one rule for a record that arrives whole: a teammate's file in the repository, a bundle
entry, a remote's pull. It passes the rules a CLI write passes (every field, sizes, the secret
scan of every text the record carries), its ids and links are in their forms, its dates are the
store's and not from the future, and it keeps no more trust than its source may claim."""

from datetime import UTC, datetime

from msgspec import Struct
from msgspec.structs import replace

from contextd.clock import CLOCK_SKEW, is_stamp, parse_instant
from contextd.core.writing.validation import checked_text, validate_record
from contextd.errors import ValidationError
from contextd.ids import is_id
from contextd.models import ConstraintBody, Hardness, Origin, Record, Status

__all__ = [
    "FROM_ANOTHER_STORE",
    "FROM_A_TEAMMATE",
    "MAX_RELATED",
    "Claims",
    "admit_record",
    "check_stamp",
]

MAX_RELATED = 50
_STAMPS = ("created_at", "updated_at", "verified_at")
_HARDER = (Hardness.ADVISORY, Hardness.STRONG, Hardness.ABSOLUTE)


class Claims(Struct, frozen=True):
    """The most a source may claim for what it brings: every record is given `origin`, and
    priority and hardness are held at most at `priority` and `hardness`."""

    origin: Origin
    priority: int = 5
    hardness: Hardness = Hardness.ABSOLUTE


# The user's own records from another machine: kept as they were, trusted as an import.
FROM_ANOTHER_STORE = Claims(Origin.IMPORT)
# A file someone committed: a teammate's word, which cannot top the user's own.
FROM_A_TEAMMATE = Claims(Origin.IMPORT, priority=3, hardness=Hardness.STRONG)


def admit_record(record: Record, claims: Claims, *, now: datetime | None = None) -> Record:
    """`record` cleaned as a CLI write cleans it, held to `claims`.

    Raises:
        ValidationError: a field, id, link or date breaks a rule, or a text holds a secret;
            the message names the first.
    """
    _check_links(record)
    latest = (now or datetime.now(UTC)) + CLOCK_SKEW
    for name in _STAMPS:
        check_stamp(name, getattr(record, name), latest)
    clean = validate_record(record)
    reason = record.archived_reason
    if reason is not None:
        reason = checked_text("archived_reason", reason, label="archive reason") or None
    body = clean.body
    if isinstance(body, ConstraintBody):
        body = replace(body, hardness=_at_most(body.hardness, claims.hardness))
    return replace(
        clean,
        body=body,
        related_to=tuple(dict.fromkeys(record.related_to)),
        origin=claims.origin,
        priority=min(clean.priority, claims.priority),
        archived_reason=reason,
    )


def check_stamp(name: str, value: object, latest: datetime) -> None:
    """Raises:
    ValidationError: `value` is not a stamp in the store's form, or lies after `latest`.
    """
    if not is_stamp(value):
        raise ValidationError(name, f"Its {name} is not in the form 2026-01-31T12:00:00.000Z.")
    assert isinstance(value, str)
    if parse_instant(value) > latest:
        raise ValidationError(
            name, f"Its {name} lies in the future ({value}); check the clock that wrote it."
        )


def _check_links(record: Record) -> None:
    if not is_id(record.id):
        raise ValidationError("id", "Its id is not a contextd id.")
    if record.project_id is not None and not is_id(record.project_id):
        raise ValidationError("project_id", "It names a project by an id that is not one.")
    related = record.related_to
    if len(related) > MAX_RELATED or not all(is_id(r) for r in related):
        raise ValidationError(
            "related_to", f"Its related ids are malformed or more than {MAX_RELATED}."
        )
    if record.id in related:
        raise ValidationError("related_to", "It is related to itself.")
    successor = record.superseded_by
    if successor is not None and (not is_id(successor) or successor == record.id):
        raise ValidationError("superseded_by", "It is superseded by a malformed id or by itself.")
    if record.status is Status.SUPERSEDED and successor is None:
        raise ValidationError("superseded_by", "It is superseded by nothing.")
    if record.status is Status.ACTIVE and successor is not None:
        raise ValidationError("superseded_by", "It is active yet superseded.")


def _at_most(hardness: Hardness, cap: Hardness) -> Hardness:
    return min(hardness, cap, key=_HARDER.index)
