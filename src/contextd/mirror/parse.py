"""Markdown back to record drafts: a mirror file split into its `### ` sections, each with the
id its marker carries (none for a section a person added) and its labelled fields."""

import re

from msgspec import Struct, field

from contextd.errors import ValidationError
from contextd.mirror.layout import GROUPS, Group, fields_of
from contextd.mirror.render import section_hash
from contextd.models import Kind, MemoryBody, Origin, RecordDraft, body_from_dict

__all__ = ["Section", "parse_file", "section_draft"]

_MARKER = re.compile(r"^<!--\s*contextd:record\s+([0-9a-fA-F-]{8,})\s*-->\s*$")
_LABEL = re.compile(r"^\*\*([^*:]+):\*\*\s?(.*)$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LABELS = {f.label.lower() for kind in Kind for f in fields_of(kind)}
_LIST_LABELS = {f.label.lower() for kind in Kind for f in fields_of(kind) if f.is_list}


class Section(Struct):
    """One `### ` section of a mirror file, as a person left it."""

    file: str
    group: str  # the `## ` heading it sits under ("" when none)
    record_id: str | None
    line: int  # 1-based line of its `### ` heading
    title_lines: list[str]
    values: dict[str, str | list[str]] = field(default_factory=dict)  # lower-case label -> value
    lines: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        return "\n".join(self.title_lines).strip()

    @property
    def digest(self) -> str:
        return section_hash(self.lines)


def parse_file(name: str, text: str) -> list[Section]:
    """The record sections of a mirror file; text outside them (headers, intros) is ignored."""
    parser = _Parser(name)
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        parser.number = number
        parser.feed(line)
    return parser.sections


class _Parser:
    def __init__(self, name: str) -> None:
        self.name = name
        self.sections: list[Section] = []
        self.group = ""
        self.marker = ""  # the marker line waiting for its `### ` heading
        self.current: Section | None = None
        self.label: str | None = None
        self.fenced = False
        self.number = 0

    def feed(self, line: str) -> None:
        if not self.fenced and self._structure(line):
            return
        current = self.current
        if current is None:
            return
        current.lines.append(line)
        if _FENCE.match(line):
            self.fenced = not self.fenced
        found = None if self.fenced else _LABEL.match(line)
        if found and found.group(1).strip().lower() in _LABELS:
            self.label = found.group(1).strip().lower()
            _start(current, self.label, found.group(2))
        elif self.label is None:
            current.title_lines.append(line)
        else:
            _continue(current, self.label, line)

    def _structure(self, line: str) -> bool:
        """Handle a marker or heading line; False for any other line."""
        marker = _MARKER.match(line)
        if marker:
            self.marker, self.current, self.label = line, None, None
            return True
        if line.startswith("## "):
            self.group, self.current, self.marker = line[3:].strip(), None, ""
            return True
        if not line.startswith("### "):
            return False
        found = _MARKER.match(self.marker)
        record_id = found.group(1).lower() if found else None
        self.current = Section(self.name, self.group, record_id, self.number, [line[4:].strip()])
        self.current.lines += [self.marker, line]
        self.sections.append(self.current)
        self.marker, self.label = "", None
        return True


def _start(section: Section, label: str, inline: str) -> None:
    if label in _LIST_LABELS:
        section.values[label] = [inline.strip()] if inline.strip() else []
    else:
        section.values[label] = inline


def _continue(section: Section, label: str, line: str) -> None:
    value = section.values[label]
    if isinstance(value, str):
        section.values[label] = f"{value}\n{line}"
        return
    item = _ITEM.match(line)
    if item:
        value.append(item.group(1))
    elif line.strip() and value:
        value[-1] = f"{value[-1]}\n{line.strip()}"


def group_named(heading: str) -> Group | None:
    return next((g for g in GROUPS if g.heading.lower() == heading.strip().lower()), None)


def section_draft(section: Section, kind: Kind, *, is_global: bool) -> RecordDraft:
    """The record a section describes, for a record of `kind` (not yet validated).

    Raises:
        ValidationError: a field cannot be read (a priority that is not a number).
    """
    values = {label: _value(section, label) for label in section.values}
    by_name = {f.name: values.get(f.label.lower(), "") for f in fields_of(kind)}
    group = group_named(section.group)
    category = str(values.get("category", "")) or (group.category if group else None)
    body = MemoryBody() if kind is Kind.MEMORY else body_from_dict(kind, by_name)
    return RecordDraft(
        kind=kind,
        title=section.title,
        body=body,
        category=category if kind is Kind.MEMORY else None,
        tags=tuple(t.strip() for t in str(by_name["tags"]).split(",") if t.strip()),
        retrieval_hints=tuple(by_name["retrieval_hints"] or ()),
        origin=Origin.USER,
        priority=_priority(section, str(by_name["priority"])),
        is_global=is_global,
    )


def _value(section: Section, label: str) -> str | list[str]:
    value = section.values[label]
    return [v.strip() for v in value if v.strip()] if isinstance(value, list) else value.strip()


def _priority(section: Section, text: str) -> int:
    if not text.strip():
        return 3
    try:
        return int(text)
    except ValueError:
        raise ValidationError(
            "priority", f"The priority on line {section.line} must be a number from 1 to 5."
        ) from None
