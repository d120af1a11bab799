"""Where each record lives in the mirror, and the Markdown labels of its fields.

    overview.md       constraints (## Constraints) and notes: every memory but architecture
    architecture.md   memories of category architecture
    decisions.md      decisions
    tasks.md          pipelines (ordered workflows)
    checkpoints/      one file per checkpoint, <date>-<id tail>.md

Only active records are mirrored; superseded and archived ones stay in the store.
"""

from msgspec import Struct

from contextd.fields import RECORD_FIELDS, body_fields
from contextd.models import Kind, Record

__all__ = [
    "CHECKPOINTS",
    "GROUPS",
    "MAIN_FILES",
    "MANIFEST",
    "Field",
    "Group",
    "fields_of",
    "file_of",
    "group_of",
]

MANIFEST = ".manifest.json"
CHECKPOINTS = "checkpoints"
MAIN_FILES = ("overview.md", "architecture.md", "decisions.md", "tasks.md")


class Group(Struct, frozen=True):
    """A `## ` section of a mirror file; a new record written under it gets its kind."""

    heading: str
    file: str
    kind: Kind
    category: str | None = None  # for memories written under it without a Category line


GROUPS = (
    Group("Constraints", "overview.md", Kind.CONSTRAINT),
    Group("Notes", "overview.md", Kind.MEMORY, "convention"),
    Group("Architecture", "architecture.md", Kind.MEMORY, "architecture"),
    Group("Decisions", "decisions.md", Kind.DECISION),
    Group("Pipelines", "tasks.md", Kind.PIPELINE),
    Group("Checkpoint", CHECKPOINTS, Kind.CHECKPOINT),
)


class Field(Struct, frozen=True):
    label: str
    name: str  # the body field, or one of: category, tags, retrieval_hints, priority
    is_list: bool = False


_RECORD = {f.name: f for f in RECORD_FIELDS}
_BODY_FIELDS: dict[Kind, tuple[Field, ...]] = {
    kind: tuple(Field(f.heading, f.name, f.many) for f in body_fields(kind))
    or (Field(_RECORD["category"].heading, "category"),)
    for kind in Kind
}
# Tags are written on one line, comma-separated.
_COMMON = tuple(
    Field(_RECORD[name].heading, name, name == "retrieval_hints")
    for name in ("priority", "tags", "retrieval_hints")
)


def fields_of(kind: Kind) -> tuple[Field, ...]:
    """The labelled fields a record of `kind` shows, in order."""
    return _BODY_FIELDS[kind] + _COMMON


def group_of(record: Record) -> Group:
    if record.kind is Kind.MEMORY:
        return GROUPS[2] if record.category == "architecture" else GROUPS[1]
    return next(g for g in GROUPS if g.kind is record.kind)


def file_of(record: Record) -> str:
    """The mirror file (relative to the folder) that shows `record`."""
    if record.kind is Kind.CHECKPOINT:
        return f"{CHECKPOINTS}/{record.created_at[:10]}-{record.id[-12:]}.md"
    return group_of(record).file
