"""Domain values shared by every layer: projects, records and their typed bodies. No I/O.

Values here and across the package are frozen msgspec Structs rather than dataclasses: the
same typed, immutable, slotted values, but created in C. On Python 3.11 each dataclass
compiles its generated methods at import (about 1.4 ms apiece), and a hook process, which
starts anew on every prompt, was paying some 45 ms of that before doing any work.
"""

from enum import StrEnum
from typing import Any

from msgspec import Struct, field

from contextd.errors import ValidationError

__all__ = [
    "BODY_TYPES",
    "Body",
    "CheckpointBody",
    "ConstraintBody",
    "DecisionBody",
    "Group",
    "Hardness",
    "Kind",
    "MemoryBody",
    "Origin",
    "PipelineBody",
    "Probe",
    "Project",
    "Reach",
    "Record",
    "RecordDraft",
    "RecordEdit",
    "ScoreTerms",
    "SearchHit",
    "SearchQuery",
    "SearchResult",
    "Similar",
    "PROVENANCE_TAGS",
    "Status",
    "Stored",
    "body_from_dict",
    "body_to_dict",
    "topic_tags",
]


class Kind(StrEnum):
    MEMORY = "memory"
    DECISION = "decision"
    CONSTRAINT = "constraint"
    PIPELINE = "pipeline"
    CHECKPOINT = "checkpoint"


# Tags contextd adds to say where a record came from, not what it is about: an ADR import
# ("adr"), an agent file's ("imported" and the file's name), a checkpoint contextd drafted, a
# model's proposal. They are no shared topic (quality's "isolated" check leaves them out).
PROVENANCE_TAGS = frozenset({"adr", "imported", "drafted", "proposed"})


def topic_tags(record: "Record") -> tuple[str, ...]:
    """A record's tags that say what it is about (an agent file's import carries only its
    provenance: "imported" and the file's name)."""
    if "imported" in record.tags:
        return ()
    return tuple(tag for tag in record.tags if tag not in PROVENANCE_TAGS)


class Status(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    ARCHIVED = "archived"


class Origin(StrEnum):
    """Who wrote a record; retrieval trusts user > agent > import."""

    USER = "user"
    AGENT = "agent"
    IMPORT = "import"


class Probe(Struct, frozen=True):
    """What a short check of something contextd relies on found: `ok` (it answered),
    `failed` (it did not, and why) or `unchecked` (there was nothing to ask, and why)."""

    state: str  # "ok", "failed" or "unchecked"
    detail: str

    @property
    def ok(self) -> bool:
        return self.state == "ok"


class Hardness(StrEnum):
    ABSOLUTE = "absolute"
    STRONG = "strong"
    ADVISORY = "advisory"


class MemoryBody(Struct, frozen=True, tag="memory", tag_field="kind"):
    """A free memory keeps its text in the record title; it has no extra fields."""


class DecisionBody(Struct, frozen=True, tag="decision", tag_field="kind"):
    """A choice between alternatives and why it was made."""

    problem: str
    why_chosen: str
    alternatives: str = ""
    what_we_tried: str = ""
    tradeoffs: str = ""


class ConstraintBody(Struct, frozen=True, tag="constraint", tag_field="kind"):
    """A rule that must hold, why, how hard, and which files it covers."""

    reason: str
    hardness: Hardness
    scope: tuple[str, ...] = ()
    triggering_incident: str = ""


class PipelineBody(Struct, frozen=True, tag="pipeline", tag_field="kind"):
    """A workflow: what it is for and its steps in order."""

    purpose: str
    steps: tuple[str, ...]


class CheckpointBody(Struct, frozen=True, tag="checkpoint", tag_field="kind"):
    """Where a piece of work stands: its goal, what is done, what comes next."""

    goal: str = ""
    done: tuple[str, ...] = ()
    next: tuple[str, ...] = ()
    problem: str = ""


# Tagged by kind, so a record crosses the daemon's socket whole (msgspec decodes the union).
Body = MemoryBody | DecisionBody | ConstraintBody | PipelineBody | CheckpointBody

BODY_TYPES: dict[Kind, type[Body]] = {
    Kind.MEMORY: MemoryBody,
    Kind.DECISION: DecisionBody,
    Kind.CONSTRAINT: ConstraintBody,
    Kind.PIPELINE: PipelineBody,
    Kind.CHECKPOINT: CheckpointBody,
}


def body_to_dict(body: Body) -> dict[str, Any]:
    """Plain JSON-ready form of a body (tuples become lists, enums their value)."""
    out: dict[str, Any] = {}
    for name in body.__struct_fields__:  # (structs.fields() inspects annotations: slow here)
        value = getattr(body, name)
        out[name] = (
            list(value)
            if isinstance(value, tuple)
            else str(value)
            if isinstance(value, StrEnum)
            else value
        )
    return out


def body_from_dict(kind: Kind, data: dict[str, Any]) -> Body:
    """Rebuild a typed body from its JSON form; unknown keys are ignored."""
    body_type = BODY_TYPES[kind]
    values: dict[str, Any] = {}
    for name in body_type.__struct_fields__:
        if name not in data:
            continue
        value = data[name]
        if isinstance(value, list):
            value = tuple(value)
        if name == "hardness":
            value = _hardness(value)
        values[name] = value
    return body_type(**values)


def _hardness(value: object) -> Hardness:
    try:
        return Hardness(str(value))
    except ValueError:
        choices = ", ".join(h.value for h in Hardness)
        raise ValidationError("hardness", f"Hardness must be one of {choices}.") from None


class Project(Struct, frozen=True):
    """A project: its slug, display name, git remote and attached folders; `checkout` is the
    attached folder it is seen from (its shared records are those that checkout holds), when
    the command runs inside one."""

    id: str
    slug: str
    name: str
    git_remote: str | None
    paths: tuple[str, ...]
    created_at: str
    updated_at: str
    checkout: str | None = None


class Group(Struct, frozen=True):
    """A project group: its records apply to each member project, below the project's own
    and above the global ones. `members` are project ids."""

    id: str
    slug: str
    name: str
    members: tuple[str, ...]
    created_at: str
    updated_at: str


class Reach(Struct, frozen=True):
    """Whose records a project sees, nearest first: its own, then those of the group it
    belongs to, then the global ones (no owner). storage.filters.in_reach is the same rule
    as SQL; ranking reads each record's tier from here."""

    project_id: str | None
    group_id: str | None = None

    @property
    def owners(self) -> tuple[str, ...]:
        """The owners in reach besides global: the project, then its group."""
        return tuple(owner for owner in (self.project_id, self.group_id) if owner)

    def tier(self, owner: str | None) -> str | None:
        """ "project", "group" or "global" for a record of `owner`; None: out of reach."""
        if owner is None:
            return "global"
        if owner == self.project_id:
            return "project"
        return "group" if owner == self.group_id else None


class Record(Struct, frozen=True):
    """A stored record of any kind; `project_id` None means global."""

    id: str
    project_id: str | None
    kind: Kind
    title: str
    body: Body
    category: str | None
    tags: tuple[str, ...]
    retrieval_hints: tuple[str, ...]
    origin: Origin
    priority: int
    status: Status
    superseded_by: str | None
    related_to: tuple[str, ...]
    session_id: str | None
    created_at: str
    updated_at: str
    verified_at: str
    archived_reason: str | None = None

    @property
    def is_global(self) -> bool:
        return self.project_id is None

    def as_draft(self) -> "RecordDraft":
        """Its fields a write checks, as a draft: a stored record goes through the rules a
        new one does."""
        return RecordDraft(
            kind=self.kind,
            title=self.title,
            body=self.body,
            category=self.category,
            tags=self.tags,
            retrieval_hints=self.retrieval_hints,
            origin=self.origin,
            priority=self.priority,
            related_to=self.related_to,
            is_global=self.is_global,
        )


class RecordDraft(Struct, frozen=True):
    """What a caller asks to store; the core validates it and gives it an id and dates."""

    kind: Kind
    title: str
    body: Body
    category: str | None = None
    tags: tuple[str, ...] = ()
    retrieval_hints: tuple[str, ...] = ()
    origin: Origin = Origin.USER
    priority: int = 3
    related_to: tuple[str, ...] = ()
    is_global: bool = False
    # Stored in a project group instead of the project: the group's name, or "" for the
    # group the project belongs to; the project must be a member (core.workspace.groups).
    group: str | None = None
    created_at: str | None = None  # kept from the source when importing; else now
    private: bool = False  # never written to a shared project's repository files
    # Who asked for it: a person (CLI, web view), an agent (MCP), or contextd's capture (a
    # checkpoint drafted from a session's facts), or a model reading a session's transcript
    # (a proposal). The review policy holds what agents ask for; a proposal always waits.
    asked_by: str = "person"  # person | agent | capture | proposal


class RecordEdit(Struct, frozen=True):
    """Fields to change on a record; None leaves a field as it is."""

    title: str | None = None
    category: str | None = None
    tags: tuple[str, ...] | None = None
    retrieval_hints: tuple[str, ...] | None = None
    priority: int | None = None
    related_to: tuple[str, ...] | None = None
    body: dict[str, Any] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not self.body and all(
            getattr(self, name) is None
            for name in ("title", "category", "tags", "retrieval_hints", "priority", "related_to")
        )


class SearchQuery(Struct, frozen=True):
    """What to look for and which records may answer; dates are ISO instants, compared with
    each record's created time, or its last verified time when `dates_by` is "verified"."""

    text: str
    kinds: tuple[Kind, ...] = ()
    tags: tuple[str, ...] = ()
    category: str | None = None
    since: str | None = None
    before: str | None = None
    dates_by: str = "created"
    path: str | None = None  # a file: records whose scope or text names it come first
    limit: int = 10
    include_superseded: bool = False
    include_archived: bool = False
    expand_related: bool = True
    diversify: bool = False
    # Only hits at least this near the query in meaning (a cosine); without vectors, those
    # whose words match about as well as the best match's. None: every hit that ranks.
    least_similarity: float | None = None


class ScoreTerms(Struct, frozen=True):
    """Each weighted term of one hit's score, kept so `--explain` can show them."""

    fts: float
    semantic: float
    priority: float
    recency: float
    project_match: float
    trust: float
    feedback: float
    status_multiplier: float

    @property
    def summed(self) -> float:
        """The terms before the status multiplier."""
        return (
            self.fts
            + self.semantic
            + self.priority
            + self.recency
            + self.project_match
            + self.trust
            + self.feedback
        )

    @property
    def total(self) -> float:
        return self.summed * self.status_multiplier


class CodeChange(Struct, frozen=True):
    """A change in git to code a record names, made after the record was last verified."""

    commit: str
    committed_at: str  # ISO instant
    subject: str
    path: str  # the file (its name after the commit)
    change: str  # what happened to it, e.g. "changed", "deleted", "renamed from a.py"

    def describe(self) -> str:
        return (
            f"{self.path} {self.change} in {self.commit[:7]} ({self.committed_at[:10]}, "
            f"\u201c{self.subject}\u201d)"
        )


class SearchHit(Struct, frozen=True):
    """One record found by a search, with its score and the terms behind it."""

    record: Record
    score: float
    terms: ScoreTerms
    linked_from: str | None = None  # set when the hit came in through another hit's related_to
    via: str | None = None  # set when a superseded record's match was credited to this one
    similarity: float = 0.0  # the best raw cosine behind the hit (0 without vectors)
    code_change: CodeChange | None = None  # code it names changed since it was verified
    tier: str = ""  # "project", "group" or "global": whose record it is, seen by the asker


class Similar(Struct, frozen=True):
    """A stored record close to a new one: a restatement, or a contradiction?"""

    record: Record
    similarity: float
    replaces: str | None = None  # why the new record seems to replace this one, if it does


class Stored(Struct, frozen=True):
    """A new record as stored, with the stored records it resembles and the short ids of all
    of them, as a writer reports it (in this process or through the daemon)."""

    record: Record
    similar: list[Similar]
    shorts: dict[str, str]
    held: bool = False  # waiting in the review queue (its id is the draft's), not stored yet
    group: str | None = None  # the slug of the project group it was written into


class SearchResult(Struct, frozen=True):
    """Ranked hits; `degraded` says why retrieval fell back to full-text only, if it did."""

    hits: tuple[SearchHit, ...]
    degraded: str | None = None
