"""The bounded briefing a session starts with: durable knowledge first, session detail last."""

from typing import TYPE_CHECKING

from msgspec import Struct

from contextd.core.recall.packing import estimate_tokens, pack
from contextd.core.recall.presentation import fence, fence_overhead, one_line
from contextd.fields import KINDS
from contextd.models import (
    CheckpointBody,
    CodeChange,
    ConstraintBody,
    DecisionBody,
    Hardness,
    Kind,
    Project,
    Reach,
    Record,
)

if TYPE_CHECKING:  # only a type here: the prompt hook, importing this, skips the write path
    from contextd.core.reading.reader import RecordReader


__all__ = ["Briefing", "briefing_candidates", "build_briefing"]

_DURABLE_CATEGORIES = ("convention", "gotcha", "architecture")


class Briefing(Struct, frozen=True):
    text: str
    included: int
    omitted: int
    tokens: int
    records: tuple[Record, ...] = ()  # what the text carries


# A briefing of a few thousand tokens holds tens of records: reading the newest few hundred of
# each kind (not all 10,000 of a big store) keeps session start fast and loses nothing.
CANDIDATES_PER_KIND = 200


def briefing_candidates(records: "RecordReader", project: Project) -> list[Record]:
    """The active records a briefing chooses from: the newest of each kind."""
    return [
        record
        for kind in Kind
        for record in records.list_records(project, kinds=(kind,), limit=CANDIDATES_PER_KIND)
    ]


def build_briefing(
    records: "RecordReader",
    project: Project,
    budget: int,
    candidates: list[Record] | None = None,
    *,
    already_there: int = 0,
    code_changes: dict[str, CodeChange] | None = None,
) -> Briefing:
    """Constraints (absolute first), decisions, conventions and gotchas, pipelines, then the
    last checkpoint; what does not fit is counted, oldest-verified detail dropped first.

    `already_there` records were left out of `candidates` because the reader has them in
    front of it already: they are not counted as left out for the budget. A record in
    `code_changes` is marked STALE with the change to the code it names."""
    active = briefing_candidates(records, project) if candidates is None else candidates
    ordered = _ordered(active, records.reach(project))
    header = f"# contextd briefing: {one_line(project.name)}"
    attributes = {"project": project.slug}
    # The fence, the header and the note of what was left out come first.
    reserved = fence_overhead(attributes=attributes) + len(header) + 64
    carried, blocks = pack(
        ((r, _block(r, (code_changes or {}).get(r.id))) for r in ordered), budget, reserved
    )
    omitted = sum(records.counts(project).values()) - len(blocks) - already_there
    if omitted:
        header += f" ({omitted} more records left out for the budget; use get_context)"
    body = "\n\n".join([header, *blocks]) if blocks else header + "\n(no records yet)"
    text = fence(body, attributes=attributes)
    return Briefing(text, len(blocks), omitted, estimate_tokens(text), tuple(carried))


def _block(record: Record, change: CodeChange | None) -> str:
    """A record's line, and its STALE mark when the code it names changed."""
    if change is None:
        return _line(record)
    return f"{_line(record)}\n  STALE: {change.describe()}; verify or update it"


_TIER_RANK = {"project": 0, "group": 1, "global": 2}


def _ordered(active: list[Record], reach: Reach) -> list[Record]:
    def group_of(record: Record) -> int:
        body = record.body
        if isinstance(body, ConstraintBody):
            group = 0 if body.hardness is Hardness.ABSOLUTE else 1
        elif record.kind is Kind.DECISION:
            group = 2
        elif record.kind is Kind.MEMORY and record.category in _DURABLE_CATEGORIES:
            group = 3
        elif record.kind is Kind.PIPELINE:
            group = 4
        elif record.kind is Kind.MEMORY:
            group = 5
        else:
            group = 6
        return group

    latest_checkpoint = next((r for r in active if r.kind is Kind.CHECKPOINT), None)
    rest = [r for r in active if r.kind is not Kind.CHECKPOINT]

    def tier(record: Record) -> int:
        """In a project group: its own records, then the group's, then global ones."""
        if reach.group_id is None:
            return 0  # no group: own and global records by recency alone, as always
        return _TIER_RANK.get(reach.tier(record.project_id) or "global", 2)

    # Within a section, most recently verified first, so the oldest detail drops first.
    newest_first = sorted(rest, key=lambda r: r.verified_at, reverse=True)
    ordered = sorted(newest_first, key=lambda r: (group_of(r), tier(r)))
    return ordered + ([latest_checkpoint] if latest_checkpoint else [])


def _line(record: Record) -> str:
    """One record as briefing text: every stored value on one line (see presentation)."""
    label = record.category if record.kind is Kind.MEMORY and record.category else str(record.kind)
    head = f"- [{label} {record.id}] {one_line(record.title)}"
    body = record.body
    if isinstance(body, ConstraintBody):
        head += f" ({body.hardness}; {one_line(body.reason)}"
        scope = ", ".join(one_line(glob) for glob in body.scope)
        head += f"; applies to {scope})" if scope else ")"
    elif isinstance(body, CheckpointBody):
        parts = [
            f"goal: {one_line(body.goal)}" if body.goal else "",
            f"next: {'; '.join(one_line(n) for n in body.next)}" if body.next else "",
            f"open problem: {one_line(body.problem)}" if body.problem else "",
        ]
        stopped = f"Where work stopped ({record.created_at[:10]}): {one_line(record.title)}"
        head = "\n".join([stopped, *(p for p in parts if p)])
    elif isinstance(body, DecisionBody):
        head += f" — why: {one_line(getattr(body, KINDS[record.kind].main))}"
    return head
