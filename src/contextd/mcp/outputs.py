"""The shape of every tool's structured content, one model per result, advertised as the tool's
output schema; the SDK validates what a tool returns against it before it leaves the server.

The models mirror the views in contextd.core.reading.views (and the few dicts the tools build)
key for key. They forbid keys they do not name, so the schemas say `additionalProperties: false`
and a view that grows a key fails the tests until its model names it. A key that only some
results carry (a label, an archive reason) is optional, never null.
"""

from typing import TYPE_CHECKING, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, create_model

from contextd.fields import body_fields
from contextd.models import Hardness, Kind, Origin, Status

__all__ = [
    "CompactionReport",
    "ContextResult",
    "Deleted",
    "Learned",
    "QualityReport",
    "RecordDetail",
    "RecordOut",
    "SearchResult",
    "SessionInfo",
    "SessionOut",
    "StaleRecords",
    "Summary",
    "Superseded",
    "Written",
]


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def absent(description: str) -> Any:
    """An optional key: left out of the result when it does not apply (never sent as null)."""
    return Field(None, description=description, json_schema_extra=_no_default)


class Shape(BaseModel):
    model_config = ConfigDict(extra="forbid")


NotCurrent = Literal["NOT CURRENT"]
LABEL = "NOT CURRENT when a newer record replaced it; absent for a current record."
Instant = str  # ISO 8601, UTC


def _fields_model(kind: Kind) -> type[Shape]:
    """The typed fields of one kind of record (`body`), from the catalogue; every field is
    always present."""
    fields: dict[str, Any] = {}
    for spec in body_fields(kind):
        kind_of: Any = Hardness if spec.choices else list[str] if spec.many else str
        unsaid = " (empty if not said)" if spec.many else " ('' if not said)"
        fields[spec.name] = (
            kind_of,
            Field(description=spec.help + ("" if spec.required else unsaid)),
        )
    doc = f"The fields of a {kind}." if fields else "A memory keeps its text in the title."
    return create_model(f"{kind.title()}Fields", __base__=Shape, __doc__=doc, **fields)


if TYPE_CHECKING:
    Body = Shape
else:
    Body = Union[tuple(_fields_model(kind) for kind in Kind)]  # noqa: UP007 (a runtime tuple)


class RecordOut(Shape):
    """A stored record with every field."""

    id: str = Field(description="The record's id (a unique prefix of 8+ characters also works).")
    kind: Kind = Field(description="memory, decision, constraint, pipeline or checkpoint.")
    title: str = Field(description="The memory's text, or the decision, rule, name or summary.")
    status: Status = Field(description="active, superseded or archived.")
    project_id: str | None = Field(description="The project's id; null for a global record.")
    category: str | None = Field(description="A memory's category (gotcha, convention, ...).")
    body: Body = Field(description="The fields of the record's kind.")
    tags: list[str] = Field(description="Topic tags.")
    retrieval_hints: list[str] = Field(description="Other phrasings a search might use.")
    origin: Origin = Field(description="Who stated it: user, agent or import.")
    priority: int = Field(description="Ranking priority.")
    superseded_by: str | None = Field(description="The id of the record that replaced it.")
    related_to: list[str] = Field(description="Ids of related records.")
    session_id: str | None = Field(description="The session it was written in.")
    created_at: Instant = Field(description="When it was recorded (ISO 8601).")
    updated_at: Instant = Field(description="When it last changed (ISO 8601).")
    verified_at: Instant = Field(description="When it was last confirmed true (ISO 8601).")
    label: NotCurrent = absent(LABEL)
    archived_reason: str = absent("Why it was archived; absent when none was given.")
    held_for_review: Literal[True] = absent(
        "Present when the change waits for a person's approval and is not made yet."
    )


class SimilarRecord(Shape):
    """A stored record close to the one just written: a restatement, or a contradiction?"""

    id: str = Field(description="The similar record's id.")
    kind: Kind = Field(description="Its kind.")
    title: str = Field(description="Its title.")
    status: Status = Field(description="Its status.")
    similarity: float = Field(description="Cosine similarity to the written record (0-1).")
    label: NotCurrent = absent(LABEL)
    likely_replaces: str = absent(
        "Why the written record seems to replace this one (then call supersede); absent if not."
    )


class Written(RecordOut):
    """A record as written, with the stored records it resembles."""

    similar: list[SimilarRecord] = Field(
        description="Records that may say the same or the opposite; check them."
    )
    group: str = absent(
        "The project group it was written into (every member project sees it); absent if not."
    )


class RecordRef(Shape):
    id: str = Field(description="The record's id.")
    title: str = Field(description="Its title.")


class RecordDetail(RecordOut):
    """One record in full, with its place in a chain of replacements."""

    successor: RecordRef = absent("The record that directly replaced it, if one did.")
    current: RecordRef = absent("The current end of its chain of replacements, if replaced.")
    supersedes: list[RecordRef] = Field(description="The older records it replaced.")
    group: str = absent(
        "The project group it belongs to (every member project sees it); absent if none."
    )


class CodeChange(Shape):
    """A git change to code a record names, made after the record was last verified."""

    commit: str = Field(description="The commit's hash.")
    committed_at: Instant = Field(description="When it was committed (ISO 8601).")
    subject: str = Field(description="The commit's subject line.")
    path: str = Field(description="The file (its name after the commit).")
    change: str = Field(description="What happened to it: changed, deleted, renamed from ...")


class Hit(Shape):
    """One ranked result."""

    id: str = Field(description="The record's id.")
    kind: Kind = Field(description="Its kind.")
    title: str = Field(description="Its title.")
    status: Status = Field(description="Its status.")
    score: float = Field(description="The ranking score (higher ranks first).")
    category: str | None = Field(description="A memory's category.")
    tags: list[str] = Field(description="Topic tags.")
    scope: Literal["global", "group", "project"] = Field(
        description="Whose it is: this project's, its project group's, or every project's."
    )
    superseded_by: str | None = Field(description="The id of the record that replaced it.")
    verified_at: Instant = Field(description="When it was last confirmed true (ISO 8601).")
    label: NotCurrent = absent(LABEL)
    linked_from: str = absent("The hit whose related records brought this one in, if any.")
    stale: CodeChange = absent("Code it names that changed since it was verified, if any.")


Degraded = Field(description="Why retrieval fell back to full-text only; null when it did not.")


class Summary(Shape):
    """get_project_summary: the briefing."""

    briefing: str = Field(description="The briefing text, as the model reads it.")
    included: int = Field(description="Records the briefing carries.")
    omitted: int = Field(description="Records left out to fit the budget.")
    tokens: int = Field(description="Estimated tokens of the briefing.")
    writable: bool = Field(description="Whether the store accepts writes.")


class ContextResult(Shape):
    """get_context: what fits the budget, as text and as ranked results."""

    context: str = Field(description="The packed context, as the model reads it.")
    omitted: int = Field(description="Results that matched but did not fit the budget.")
    tokens: int = Field(description="Estimated tokens of the context.")
    degraded: str | None = Degraded
    results: list[Hit] = Field(description="The packed results, in rank order.")


class SearchResult(Shape):
    """search: ranked results."""

    results: list[Hit] = Field(description="The results, in rank order.")
    degraded: str | None = Degraded


class Superseded(Shape):
    """supersede: the replaced record and its replacement."""

    superseded: RecordOut = Field(description="The older record, now NOT CURRENT.")
    by: RecordOut = Field(description="The record that replaces it.")
    held_for_review: Literal[True] = absent(
        "Present when the change waits for a person's approval and is not made yet."
    )


class Deleted(Shape):
    deleted: str = Field(description="The deleted record's id.")
    title: str = Field(description="Its title.")
    held_for_review: Literal[True] = absent(
        "Present when the change waits for a person's approval and is not made yet."
    )


class Learned(Shape):
    learned: str = Field(description="The record marked as the answer.")
    query: str = Field(description="The query it answers.")


class SessionOut(Shape):
    """A working session of an agent on a project."""

    id: str = Field(description="The session's id.")
    project_id: str = Field(description="The project's id.")
    agent: str = Field(description="The client that opened it (its clientInfo name).")
    started_at: Instant = Field(description="When it started (ISO 8601).")
    ended_at: Instant | None = Field(description="When it ended; null while open.")
    summary: str | None = Field(description="What it did, as given when it ended.")
    developer: str = Field(description="Whose session it is on a shared store ('' locally).")


class SessionInfo(Shape):
    """session_info: this connection's session, or the project's last one."""

    session: SessionOut | None = Field(description="The session; null if none was recorded.")
    this_connection: bool = Field(description="Whether it is this connection's own session.")
    project: str = Field(description="The project the call resolved (its name).")
    project_from: str = Field(description="What chose the project.")


class RecordBrief(Shape):
    id: str = Field(description="The record's id.")
    kind: Kind = Field(description="Its kind.")
    title: str = Field(description="Its title.")


class Compaction(Shape):
    taken_at: Instant = Field(description="When the compaction happened (ISO 8601).")
    trigger: str = Field(description="What triggered it (manual, auto).")
    given: int = Field(description="Records the session had been given before it.")
    lost: list[RecordBrief] = Field(description="Of those, still current and not given since.")
    written: list[RecordBrief] = Field(description="Recorded in the session before it.")
    quality_issues: int = Field(description="Quality issues found at the time.")


class CompactionReport(Shape):
    """get_compaction_report: what the last compaction made the session forget."""

    report: Compaction | None = Field(description="The report; null if none was recorded.")


class StaleRecords(Shape):
    """prune_stale: records not verified recently."""

    days: int = Field(description="The age, in days since last verified, that counts as stale.")
    records: list[RecordOut] = Field(description="The stale records.")


class QualityIssue(Shape):
    kind: str = Field(
        description="duplicate, thin_rationale, missing_tags, isolated or stale (more may come)."
    )
    id: str = Field(description="The record's id.")
    title: str = Field(description="Its title.")
    detail: str = Field(description="What is wrong.")
    fix: str = Field(description="What to do about it.")


class QualityReport(Shape):
    """verify_quality: the quality scan."""

    issues: list[QualityIssue] = Field(description="The issues found, duplicates first.")
