"""A change asked of a record (`update`, a held draft's `review edit`) applied to its draft:
the fields the change names replace the draft's, before anything is validated."""

from typing import Any, TypeVar

from msgspec.structs import replace

from contextd.errors import ValidationError
from contextd.models import Record, RecordDraft, RecordEdit, body_from_dict, body_to_dict

__all__ = ["edited_body", "edited_draft"]

T = TypeVar("T")


def _pick(new: T | None, old: T) -> T:
    return old if new is None else new


def edited_draft(draft: RecordDraft, edit: RecordEdit) -> RecordDraft:
    """`draft` with the fields `edit` names changed, not validated yet (`update`, and a held
    draft's `review edit`)."""
    return replace(
        draft,
        title=_pick(edit.title, draft.title),
        body=edited_body(draft, edit.body),
        category=_pick(edit.category, draft.category),
        tags=_pick(edit.tags, draft.tags),
        retrieval_hints=_pick(edit.retrieval_hints, draft.retrieval_hints),
        priority=_pick(edit.priority, draft.priority),
        related_to=_pick(edit.related_to, draft.related_to),
    )


def edited_body(record: Record | RecordDraft, changes: dict[str, Any]) -> Any:
    """`record`'s body with `changes` made, refusing a field its kind does not have."""
    if not changes:
        return record.body
    current = body_to_dict(record.body)
    unknown = sorted(set(changes) - set(current))
    if unknown:
        raise ValidationError(
            unknown[0],
            f"A {record.kind} has no field {unknown[0]!r}; it has: "
            f"{', '.join(current) or 'only its title, category, tags and hints'}.",
        )
    current.update(changes)
    return body_from_dict(record.kind, current)
