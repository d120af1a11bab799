"""Per-kind rules a record must meet before it is stored, with guidance naming the field."""

import re
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from contextd.clock import parse_instant, to_iso
from contextd.credentials.scan import find_secrets
from contextd.errors import ValidationError
from contextd.fields import KINDS, BodyField, body_fields
from contextd.models import (
    BODY_TYPES,
    Body,
    Kind,
    Origin,
    Record,
    RecordDraft,
)

__all__ = [
    "MAX_FIELD_CHARS",
    "MAX_HINTS",
    "MAX_TAGS",
    "checked_text",
    "normalise_category",
    "refuse_secret",
    "refuse_secrets_in",
    "normalise_tags",
    "validate_draft",
    "validate_record",
]

MAX_FIELD_CHARS = 20_000
MAX_RECORD_CHARS = 100_000
MAX_TAGS = 20
MAX_HINTS = 8
PRIORITY_RANGE = (1, 5)
_CATEGORY = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")


def validate_draft(draft: RecordDraft, *, short_title_ok: bool = False) -> RecordDraft:
    """Check a draft against its kind's rules and return it cleaned (trimmed, normalised).

    `short_title_ok` lets a bulk import keep short texts (a chat line such as "Hi!"). An
    imported decision, constraint or pipeline keeps its source's title however short (an
    ADR's "GPIO"): its body carries the minimums; a memory's title is its whole text.

    Raises:
        ValidationError: a field is missing, too short, too long or malformed, or holds a
            secret.
    """
    refuse_secrets_in(draft)  # as given, before a message could quote a value
    if draft.origin is Origin.IMPORT and draft.kind is not Kind.MEMORY:
        short_title_ok = True
    problems: list[tuple[str, str]] = []
    spec = KINDS[draft.kind]
    title = _text("title", draft.title, label=spec.label)
    if short_title_ok and not title:
        raise ValidationError("title", f"The {spec.label} is empty.")
    _at_least(
        problems,
        "title",
        title,
        1 if short_title_ok else spec.minimum,
        f"The {spec.label}",
        "say it in a full phrase a later session will understand on its own",
    )
    category = normalise_category(draft.category) if draft.category else None
    if draft.kind is Kind.MEMORY and not category:
        problems.append(
            (
                "category",
                "A memory needs a category: architecture, convention, gotcha, preference, "
                "user or another single word.",
            )
        )
    low, high = PRIORITY_RANGE
    if not low <= draft.priority <= high:
        problems.append(("priority", f"Priority must be from {low} (low) to {high} (critical)."))
    body = _clean_body(draft.kind, draft.body, problems)
    if problems:
        raise ValidationError.several(problems)
    cleaned = replace(
        draft,
        created_at=_instant(draft.created_at) if draft.created_at else None,
        title=title,
        category=category,
        tags=normalise_tags(draft.tags),
        retrieval_hints=_hints(draft.retrieval_hints),
        body=body,
    )
    size = len(title) + sum(len(str(v)) for v in _flatten(cleaned.body))
    if size > MAX_RECORD_CHARS:
        raise ValidationError(
            "body",
            f"The record is {size} characters; the limit is {MAX_RECORD_CHARS}: "
            "split it into several related records.",
        )
    return cleaned


def validate_record(record: Record) -> Record:
    """A record that arrives whole (a bundle, a repository file) cleaned as a CLI write cleans
    it: the same field rules, sizes and secret scan.

    Raises:
        ValidationError: a field breaks its kind's rules or holds a secret.
    """
    clean = validate_draft(record.as_draft())
    refuse_secrets_in(record)  # the fields a draft does not carry (an archive reason...)
    return replace(
        record,
        title=clean.title,
        body=clean.body,
        category=clean.category,
        tags=clean.tags,
        retrieval_hints=clean.retrieval_hints,
        priority=clean.priority,
    )


def refuse_secrets_in(value: Struct) -> None:
    """Refuse a value (a draft, a record) when any text it holds, in any field present or
    future, holds a credential; the message says which field and what, never the value.

    Raises:
        ValidationError: naming the first field holding a secret.
    """
    for field, text in _texts(value):
        refuse_secret(field, text)


def _texts(value: Struct) -> list[tuple[str, str]]:
    """Every text of a Struct by its field's name, read from its declared fields (nested
    Structs, such as a record's body, and tuples of texts included)."""
    found: list[tuple[str, str]] = []
    for name in value.__struct_fields__:
        item = getattr(value, name)
        for part in item if isinstance(item, tuple) else (item,):
            if isinstance(part, str):
                found.append((name, part))
            elif isinstance(part, Struct):
                found += _texts(part)
    return found


def refuse_secret(field: str, text: str, *, label: str | None = None) -> None:
    """Refuse `text` when it holds a credential, saying what and where but never the value.

    Raises:
        ValidationError: naming the field, the kind of secret and its character span.
    """
    findings = find_secrets(text)
    if findings:
        first = findings[0]
        raise ValidationError(
            field,
            f"The {label or field} holds what looks like a {first.kind} (characters "
            f"{first.start + 1}-{first.end}); contextd never stores secrets: remove it and "
            "say where the secret lives instead (a vault, an environment variable).",
        )


def checked_text(
    field: str, value: str, *, label: str, limit: int = MAX_FIELD_CHARS, one_line: bool = False
) -> str:
    """A free text that is stored or logged beside the records (an archive reason, a session
    summary, a query), trimmed and held to the rules of a record field: no NUL, at most
    `limit` characters, no secret; with `one_line`, no line break or control character.

    Raises:
        ValidationError: naming the field and what is wrong with it.
    """
    text = _text(field, value, label=label)
    if len(text) > limit:
        raise ValidationError(
            field, f"The {label} is {len(text)} characters; the limit is {limit}."
        )
    if one_line and any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in text):
        raise ValidationError(
            field, f"The {label} must be one line of text without control characters."
        )
    refuse_secret(field, text, label=label)
    return text


def normalise_tags(tags: tuple[str, ...]) -> tuple[str, ...]:
    """Lower-case, hyphenate spaces, drop repeats; refuse empty or overlong tags."""
    out: list[str] = []
    for number, raw in enumerate(tags, 1):
        tag = re.sub(r"\s+", "-", _text("tags", raw, label="tag").lower()).strip("#")
        if not tag or len(tag) > 40:
            raise ValidationError(
                "tags", f"Tag {number} must be 1 to 40 characters; it has {len(tag)}."
            )
        if tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise ValidationError(
            "tags", f"A record takes at most {MAX_TAGS} tags; keep the telling ones."
        )
    return tuple(out)


def normalise_category(category: str) -> str:
    value = category.strip().lower()
    if not _CATEGORY.match(value):
        raise ValidationError(
            "category",
            "The category must be one lower-case word of at most 40 letters, digits, - or _, "
            "such as architecture, convention, gotcha or preference.",
        )
    return value


def _hints(hints: tuple[str, ...]) -> tuple[str, ...]:
    out = [_text("retrieval_hints", h, label="retrieval hint") for h in hints]
    out = list(dict.fromkeys(h for h in out if h))
    if len(out) > MAX_HINTS:
        raise ValidationError(
            "retrieval_hints",
            f"Give at most {MAX_HINTS} retrieval hints (2 to 4 is best): "
            "other phrasings, symptoms or error messages a later search might use.",
        )
    return tuple(out)


def _clean_body(kind: Kind, body: Body, problems: list[tuple[str, str]]) -> Body:
    """The body with every field cleaned by the catalogue's rule for it: texts trimmed, lists
    without empty items, minimums checked (each shortfall noted in `problems`)."""
    if not isinstance(body, BODY_TYPES[kind]):
        raise ValidationError("body", f"A {kind} record cannot carry a {type(body).__name__}.")
    cleaned: dict[str, Any] = {}
    for spec in body_fields(kind):
        value = getattr(body, spec.name)
        if spec.choices:
            cleaned[spec.name] = value
        elif spec.many:
            cleaned[spec.name] = _items(spec, value, problems)
        else:
            text = _text(spec.name, value, label=spec.name)
            _at_least(
                problems, spec.name, text, spec.minimum, f"The {kind}'s {spec.name}", spec.advice
            )
            cleaned[spec.name] = text
    return replace(body, **cleaned)


def _items(
    spec: BodyField, values: tuple[str, ...], problems: list[tuple[str, str]]
) -> tuple[str, ...]:
    items = [_text(spec.name, item, label=spec.name) for item in values]
    if spec.name == "scope":  # path globs, relative to the project's folder
        if not all(items):
            raise ValidationError("scope", "A scope must be a path glob such as 'src/db/**'.")
        items = [item.removeprefix("./") for item in items]
    kept = (
        tuple(dict.fromkeys(i for i in items if i)) if spec.short else tuple(i for i in items if i)
    )
    if spec.required and not kept:
        problems.append((spec.name, f"A {spec.kind} needs at least one item in its {spec.name}."))
    return kept


def _instant(text: str) -> str:
    try:
        return to_iso(parse_instant(text))
    except ValueError:
        raise ValidationError(
            "created_at", f"created_at {text!r} is not an ISO date or time."
        ) from None


def _text(field: str, value: str, *, label: str) -> str:
    if not isinstance(value, str):
        raise ValidationError(field, f"The {label} must be text.")
    if "\x00" in value:
        raise ValidationError(field, f"The {label} contains a NUL character; remove it.")
    value = value.strip()
    if len(value) > MAX_FIELD_CHARS:
        raise ValidationError(
            field, f"The {label} is {len(value)} characters; the limit is {MAX_FIELD_CHARS}."
        )
    return value


def _at_least(
    problems: list[tuple[str, str]],
    field: str,
    value: str,
    minimum: int,
    subject: str,
    advice: str,
) -> None:
    if len(value) < minimum:
        got = f"is {len(value)} characters" if value else "is missing"
        problems.append((field, f"{subject} {got}; it needs at least {minimum}: {advice}."))


def _flatten(body: object) -> list[object]:
    values: list[object] = []
    for name in getattr(body, "__slots__", ()):
        value = getattr(body, name)
        values.extend(value if isinstance(value, tuple) else [value])
    return values
