"""What `search` and `recall` show, as plain values: built once, in the CLI's own process or in
the daemon, and printed by the same code either way (the daemon sends them as JSON)."""

from collections.abc import Callable, Sequence
from typing import Any

from msgspec import Struct

from contextd.core.reading.views import NOT_CURRENT, hit_view
from contextd.core.recall.queries import SearchService
from contextd.models import Kind, Project, ScoreTerms, SearchHit, SearchQuery, Status

__all__ = ["HitLine", "RecallAnswer", "SearchAnswer", "recall_answer", "search_answer"]


class HitLine(Struct, frozen=True):
    """One hit as a person reads it in a table, and as --json prints it (`view`)."""

    view: dict[str, Any]
    short: str  # the id as the table shows it
    kind: str
    label: str  # the kind, or a memory's category
    state: str  # NOT CURRENT, archived, or ""
    is_global: bool
    title: str
    score: float
    linked_from: str | None
    linked_short: str
    terms: ScoreTerms


class SearchAnswer(Struct, frozen=True):
    query: str
    project: str
    hits: list[HitLine]
    degraded: str | None = None


class RecallAnswer(Struct, frozen=True):
    query: str
    project: str
    budget: int
    tokens: int
    omitted: int
    context: str
    hits: list[HitLine]
    degraded: str | None = None


Handles = Callable[[list[str]], dict[str, str]]  # record ids to their handles (D12)


def search_answer(
    search: SearchService, handles: Handles, project: Project, query: SearchQuery, explain: bool
) -> SearchAnswer:
    """The hits for `query`, each with its handle."""
    result = search.search(project, query)
    shorts = handles([h.record.id for h in result.hits])
    hits = _lines(result.hits, shorts, explain)
    return SearchAnswer(query.text, project.slug, hits, result.degraded)


def recall_answer(
    search: SearchService,
    handles: Handles,
    project: Project,
    query: SearchQuery,
    budget: int | None,
    explain: bool,
) -> RecallAnswer:
    """The passages for `query` packed into `budget` tokens, each hit with its handle."""
    packed = search.recall(project, query, budget)
    shorts = handles([h.record.id for h in packed.hits])
    return RecallAnswer(
        query.text,
        project.slug,
        packed.budget,
        packed.tokens,
        packed.omitted,
        packed.text,
        _lines(packed.hits, shorts, explain),
        packed.degraded,
    )


def _lines(hits: Sequence[SearchHit], shorts: dict[str, str], explain: bool) -> list[HitLine]:
    return [
        HitLine(
            view=hit_view(h, explain=explain),
            short=shorts[h.record.id],
            kind=str(h.record.kind),
            label=_label(h),
            state=_state(h.record.status),
            is_global=h.record.is_global,
            title=h.record.title,
            score=h.score,
            linked_from=h.linked_from,
            linked_short=shorts.get(h.linked_from, "") if h.linked_from else "",
            terms=h.terms,
        )
        for h in hits
    ]


def _label(hit: SearchHit) -> str:
    record = hit.record
    return str(record.kind) if record.kind is not Kind.MEMORY else (record.category or "memory")


def _state(status: Status) -> str:
    return {Status.SUPERSEDED: NOT_CURRENT, Status.ARCHIVED: "archived"}.get(status, "")
