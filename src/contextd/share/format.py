"""One shared record as a text file: TOML front matter for its fields, then a Markdown section
per long text field of its body. Deterministic (the same record always gives the same bytes) and
diff-friendly (one field per line, one section per text).

    +++
    id = "0192…"
    kind = "decision"
    title = "Use NATS JetStream for the task queue"
    …
    +++

    ## Problem

    Redis pub/sub dropped tasks whenever workers reconnected during a deploy.

A line of a text that reads exactly like a section heading is written with a backslash before
it, so no text can open a section of its own.
"""

import tomllib
from typing import Any

import tomlkit

from contextd.errors import ValidationError
from contextd.fields import BODY_FIELDS
from contextd.models import (
    BODY_TYPES,
    Kind,
    Origin,
    Record,
    Status,
    body_from_dict,
    body_to_dict,
)

__all__ = ["FormatError", "parse_record", "render_record"]

FENCE = "+++"
# Body fields written as sections, in order, with their headings; the rest are front matter.
# A name two kinds share (a problem) has one heading here: the first kind's.
SECTIONS: dict[str, str] = {}
for _field in BODY_FIELDS:
    if not _field.short:
        SECTIONS.setdefault(_field.name, _field.heading)
_HEADINGS = {f"## {label}": name for name, label in SECTIONS.items()}
_LISTS = {f.name for f in BODY_FIELDS if f.many and not f.short}


class FormatError(ValueError):
    """The file is not a shared record; the message says what is wrong with it."""


def render_record(record: Record) -> str:
    """The file's text for `record`."""
    front = tomlkit.document()
    front["id"] = record.id
    front["kind"] = str(record.kind)
    front["title"] = record.title
    if record.category:
        front["category"] = record.category
    front["status"] = str(record.status)
    if record.superseded_by:
        front["superseded_by"] = record.superseded_by
    if record.archived_reason:
        front["archived_reason"] = record.archived_reason
    front["origin"] = str(record.origin)
    front["priority"] = record.priority
    front["tags"] = list(record.tags)
    front["hints"] = list(record.retrieval_hints)
    front["related_to"] = list(record.related_to)
    body = body_to_dict(record.body)
    for name, value in body.items():
        if name not in SECTIONS:
            front[name] = value
    front["created_at"] = record.created_at
    front["updated_at"] = record.updated_at
    front["verified_at"] = record.verified_at
    lines = [FENCE, tomlkit.dumps(front).rstrip("\n"), FENCE]
    for name, label in SECTIONS.items():
        value = body.get(name)
        if not value:
            continue
        lines += ["", f"## {label}", ""]
        if name in _LISTS:
            marker = "{n}." if name == "steps" else "-"
            lines += [f"{marker.format(n=i)} {_one_line(item)}" for i, item in enumerate(value, 1)]
        else:
            lines += [_escaped(line) for line in str(value).splitlines()]
    return "\n".join(lines) + "\n"


def parse_record(text: str) -> Record:
    """The record a file holds, with no project (the reader places it).

    Raises:
        FormatError: conflict markers, no front matter, bad TOML, or a field of the wrong
            type or value; the message names it.
    """
    if any(
        line.startswith(("<<<<<<< ", ">>>>>>> ")) or line == "=======" for line in text.splitlines()
    ):
        raise FormatError("it holds git conflict markers; resolve the conflict and commit")
    front, sections = _split(text)
    try:
        data = tomllib.loads(front)
    except tomllib.TOMLDecodeError as exc:
        raise FormatError(f"its front matter is not valid TOML ({exc})") from None
    except RecursionError:  # a hostile file nests arrays thousands deep
        raise FormatError("its front matter nests too deeply to be a record") from None
    kind = _choice(data, "kind", Kind)
    fields: dict[str, Any] = {
        name: data[name] for name in BODY_TYPES[kind].__struct_fields__ if name in data
    }
    for name, value in sections.items():
        fields[name] = value
    try:
        body = body_from_dict(kind, fields)
    except (TypeError, ValidationError) as exc:
        raise FormatError(f"its {kind} body is incomplete or wrong ({exc})") from None
    return Record(
        id=_text(data, "id"),
        project_id=None,
        kind=kind,
        title=_text(data, "title"),
        body=body,
        category=_optional(data, "category"),
        tags=_strings(data, "tags"),
        retrieval_hints=_strings(data, "hints"),
        origin=_choice(data, "origin", Origin),
        priority=_integer(data, "priority"),
        status=_choice(data, "status", Status),
        superseded_by=_optional(data, "superseded_by"),
        related_to=_strings(data, "related_to"),
        session_id=None,
        created_at=_text(data, "created_at"),
        updated_at=_text(data, "updated_at"),
        verified_at=_text(data, "verified_at"),
        archived_reason=_optional(data, "archived_reason"),
    )


def _split(text: str) -> tuple[str, dict[str, Any]]:
    lines = text.splitlines()
    if not lines or lines[0].strip() != FENCE:
        raise FormatError(f"it does not start with a {FENCE} front matter line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == FENCE)
    except StopIteration:
        raise FormatError(f"its front matter has no closing {FENCE} line") from None
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines[end + 1 :]:
        name = _HEADINGS.get(line.rstrip())
        if name is not None:
            if name in sections:
                raise FormatError(f"it has two '{line.strip()}' sections")
            current = sections[name] = []
        elif current is not None:
            current.append(line)
        elif line.strip():
            raise FormatError("it has text before its first section")
    return "\n".join(lines[1:end]), {name: _value(name, body) for name, body in sections.items()}


def _value(name: str, lines: list[str]) -> str | list[str]:
    if name not in _LISTS:
        return "\n".join(_unescaped(line) for line in lines).strip()
    items = []
    for number, line in enumerate((line.strip() for line in lines), 1):
        if not line:
            continue
        marker, _, item = line.partition(" ")
        if marker != "-" and not (marker.endswith(".") and marker[:-1].isdigit()):
            raise FormatError(f"line {number} of its {SECTIONS[name]} is not a list item")
        items.append(item.strip())
    return items


def _escaped(line: str) -> str:
    return "\\" + line if line.rstrip() in _HEADINGS or line.startswith("\\## ") else line


def _unescaped(line: str) -> str:
    return line[1:] if line.startswith("\\## ") else line


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _text(data: dict[str, Any], name: str) -> str:
    value = data.get(name)
    if not isinstance(value, str) or not value.strip():
        raise FormatError(f"its '{name}' is missing or not text")
    return value


def _optional(data: dict[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise FormatError(f"its '{name}' is not text")
    return value or None


def _strings(data: dict[str, Any], name: str) -> tuple[str, ...]:
    value = data.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise FormatError(f"its '{name}' is not a list of texts")
    return tuple(value)


def _integer(data: dict[str, Any], name: str) -> int:
    value = data.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise FormatError(f"its '{name}' is not a whole number")
    return value


def _choice(data: dict[str, Any], name: str, choices: Any) -> Any:
    value = data.get(name)
    try:
        return choices(value)
    except ValueError:
        known = ", ".join(c.value for c in choices)
        raise FormatError(f"its '{name}' is not one of {known}") from None
