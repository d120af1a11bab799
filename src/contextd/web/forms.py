"""The edit form: a record's fields as form values, and a submitted form back as the edit the
core applies (only the fields that changed; the core validates them like any update)."""

from typing import Any

from starlette.datastructures import FormData

from contextd.credentials.scan import find_secrets
from contextd.errors import InvalidInputError
from contextd.fields import BODY_FIELDS, RECORD_FIELDS
from contextd.models import Kind, Record, RecordEdit, body_to_dict

__all__ = [
    "LIST_FIELDS",
    "edit_from_form",
    "field_label",
    "form_values",
    "without_secrets",
]

# One item per line in the form; tags are typed on one line, comma-separated.
LIST_FIELDS = frozenset(
    [f.name for f in BODY_FIELDS if f.many]
    + [f.name for f in RECORD_FIELDS if f.many and f.name != "tags"]
)
_LABELS = {f.name: f.label for f in reversed(BODY_FIELDS)} | {
    f.name: f.label for f in RECORD_FIELDS
}


def field_label(name: str) -> str:
    label = _LABELS.get(name, name.replace("_", " "))
    if name == "tags":
        return f"{label} (comma-separated)"
    return label + (" (one per line)" if name in LIST_FIELDS else "")


def form_values(record: Record) -> dict[str, str]:
    """Every editable field of `record` as the text its form input shows, in form order."""
    values = {"title": record.title}
    if record.kind is Kind.MEMORY:
        values["category"] = record.category or ""
    values["tags"] = ", ".join(record.tags)
    values["retrieval_hints"] = "\n".join(record.retrieval_hints)
    values["priority"] = str(record.priority)
    for name, value in body_to_dict(record.body).items():
        values[name] = "\n".join(value) if isinstance(value, list) else str(value)
    return values


def edit_from_form(record: Record, form: FormData) -> RecordEdit:
    """The fields of `form` that differ from `record`, as an edit."""
    before = form_values(record)
    changed = {
        name: text.replace("\r\n", "\n")
        for name in before
        if isinstance(text := form.get(name), str) and text.replace("\r\n", "\n") != before[name]
    }
    body: dict[str, Any] = {}
    for name in body_to_dict(record.body):
        if name in changed:
            body[name] = _lines(changed[name]) if name in LIST_FIELDS else changed[name]
    return RecordEdit(
        title=changed.get("title"),
        category=changed.get("category"),
        tags=tuple(t.strip() for t in changed["tags"].split(",") if t.strip())
        if "tags" in changed
        else None,
        retrieval_hints=_lines(changed["retrieval_hints"])
        if "retrieval_hints" in changed
        else None,
        priority=_priority(changed["priority"]) if "priority" in changed else None,
        body=body,
    )


def without_secrets(values: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """The form's values with any field holding a secret emptied (a refused form is shown
    again, and a secret is never sent back), and the names of the emptied fields."""
    emptied = [name for name, text in values.items() if find_secrets(text)]
    return {name: "" if name in emptied else text for name, text in values.items()}, emptied


def _lines(text: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in text.split("\n") if line.strip())


def _priority(text: str) -> int:
    if not text.strip().isdigit() or not 1 <= int(text) <= 5:
        raise InvalidInputError("The priority must be a whole number from 1 to 5.")
    return int(text)
