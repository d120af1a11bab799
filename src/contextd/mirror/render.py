"""Records to Markdown: each record is a `### ` section under its group, preceded by a marker
carrying its id, so an edited section maps back to its record."""

from collections import defaultdict
from collections.abc import Sequence

from msgspec import Struct

from contextd.core.workspace.textfiles import sha256_text
from contextd.mirror.layout import GROUPS, MAIN_FILES, Group, fields_of, file_of, group_of
from contextd.models import ConstraintBody, Hardness, Record, body_to_dict

__all__ = ["RECORD_MARKER", "RenderedFile", "render_folder", "render_record", "section_hash"]

RECORD_MARKER = "<!-- contextd:record {id} -->"
_HARDNESS_ORDER = {Hardness.ABSOLUTE: 0, Hardness.STRONG: 1, Hardness.ADVISORY: 2}


class RenderedFile(Struct, frozen=True):
    text: str
    sections: dict[str, str]  # record id -> hash of its section as written


def section_hash(lines: Sequence[str]) -> str:
    """Hash of a section's text, blind to trailing spaces, blank edges and line endings."""
    return sha256_text("\n".join(line.rstrip() for line in lines).strip())


def render_folder(title: str, intro: str, records: Sequence[Record]) -> dict[str, RenderedFile]:
    """Every mirror file of one folder (a project's or the global one), by relative path."""
    by_file: dict[str, list[Record]] = defaultdict(list)
    for record in sorted(records, key=_order):
        by_file[file_of(record)].append(record)
    files: dict[str, RenderedFile] = {}
    for name in MAIN_FILES:
        groups = [g for g in GROUPS if g.file == name]
        head = [f"# {title} — {name.removesuffix('.md')}", "", intro]
        files[name] = _render_file(head, groups, by_file.get(name, []))
    for name, checkpoints in by_file.items():
        if name not in MAIN_FILES:
            date = checkpoints[0].created_at[:10]
            files[name] = _render_file(
                [f"# {title} — checkpoint {date}"], [GROUPS[-1]], checkpoints
            )
    return files


def _order(record: Record) -> tuple[int, str]:
    body = record.body
    rank = _HARDNESS_ORDER[body.hardness] if isinstance(body, ConstraintBody) else 0
    return rank, record.created_at


def _render_file(head: list[str], groups: list[Group], records: list[Record]) -> RenderedFile:
    lines = [*head]
    sections: dict[str, str] = {}
    for group in groups:
        lines += ["", f"## {group.heading}"]
        for record in (r for r in records if group_of(r) == group):
            section = render_record(record)
            sections[record.id] = section_hash(section)
            lines += ["", *section]
    return RenderedFile("\n".join(lines).rstrip() + "\n", sections)


def render_record(record: Record) -> list[str]:
    """A record's section: marker, `### ` title (more title lines below it), labelled fields."""
    first, _, rest = record.title.partition("\n")
    lines = [RECORD_MARKER.format(id=record.id), f"### {first}"]
    if rest.strip():
        lines += rest.split("\n")
    lines.append("")
    values = body_to_dict(record.body) | {
        "category": record.category or "",
        "tags": ", ".join(record.tags),
        "retrieval_hints": list(record.retrieval_hints),
        "priority": str(record.priority) if record.priority != 3 else "",
    }
    for field in fields_of(record.kind):
        value = values.get(field.name)
        if not value:
            continue
        if field.is_list:
            numbered = field.name == "steps"
            lines.append(f"**{field.label}:**")
            lines += [f"{f'{i}.' if numbered else '-'} {item}" for i, item in enumerate(value, 1)]
        else:
            lines.append(f"**{field.label}:** {value}")
        lines.append("")
    while lines[-1] == "":
        lines.pop()
    return lines
