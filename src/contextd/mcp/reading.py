"""Tools that read: the briefing, context for a task, search, one record."""

from typing import Annotated, Literal

from mcp.types import CallToolResult
from pydantic import Field

from contextd.clock import parse_date
from contextd.core.reading.views import detail_view, hit_view
from contextd.core.recall.briefing import briefing_candidates, build_briefing
from contextd.core.recall.presentation import WRITES_OFF
from contextd.mcp import outputs as out
from contextd.mcp.connection import Here
from contextd.mcp.project import NOWHERE, ProjectArg
from contextd.mcp.render import hits_text, record_text, reply
from contextd.mcp.toolkit import READ, KindArg, Limit, RecordId, Tags, Toolkit
from contextd.models import Kind, SearchQuery

__all__ = ["register"]

When = Annotated[
    str | None, Field(description="A date (2026-11-01), an ISO time, or a span back (30d, 12h).")
]


def register(kit: Toolkit) -> None:
    app = kit.app

    @kit.tool(READ)
    def get_project_summary(
        budget: Annotated[
            int, Field(ge=200, le=20000, description="Token budget (about 4 characters each).")
        ] = 2000,
        project: ProjectArg = None,
        here: Here = NOWHERE,
    ) -> Annotated[CallToolResult, out.Summary]:
        """The project's current truth in brief: constraints, decisions, conventions, pipelines
        and where work stopped. Call it at the start of every session."""
        scoped = here.project()
        candidates = briefing_candidates(app.reader, scoped)
        changed = app.code_staleness.changes([r.id for r in candidates])
        briefing = build_briefing(app.reader, scoped, budget, candidates, code_changes=changed)
        data = {"briefing": briefing.text, "included": briefing.included}
        data |= {"omitted": briefing.omitted, "tokens": briefing.tokens}
        data |= {"writable": not kit.writes_off}
        text = f"{briefing.text}\n\n{WRITES_OFF}" if kit.writes_off else briefing.text
        return reply(data, text)

    @kit.tool(READ)
    def get_context(
        query: Annotated[
            str,
            Field(
                description="What you are about to work on, in words; leave it out to get "
                "the current records the filters (tags, kind, category, path, dates) select."
            ),
        ] = "",
        kind: KindArg = None,
        category: Annotated[
            str | None, Field(description="Only memories of this category (gotcha, ...).")
        ] = None,
        tags: Tags | None = None,
        since: When = None,
        before: When = None,
        dates_by: Annotated[
            Literal["created", "verified"],
            Field(description="Which time of a record since/before count from."),
        ] = "created",
        path: Annotated[
            str | None,
            Field(
                description="A file you are about to change (relative to the project root): "
                "records whose scope covers it or whose text names it come first."
            ),
        ] = None,
        include_superseded: Annotated[
            bool, Field(description="Also replaced records, labelled NOT CURRENT.")
        ] = False,
        include_archived: Annotated[bool, Field(description="Also archived records.")] = False,
        mmr: Annotated[
            bool, Field(description="Prefer diverse results over near-duplicates.")
        ] = False,
        budget: Annotated[
            int | None,
            Field(ge=50, le=50000, description="Token budget (default from config)."),
        ] = None,
        project: ProjectArg = None,
        here: Here = NOWHERE,
    ) -> Annotated[CallToolResult, out.ContextResult]:
        """Relevant decisions, constraints and notes for a task, packed into a token budget,
        with linked records. Call it before changing code you did not write this session."""
        recall = app.search.recall(
            here.project(),
            SearchQuery(
                text=query,
                kinds=(Kind(kind),) if kind else (),
                tags=tuple(tags or ()),
                category=category,
                since=parse_date(since, "since"),
                before=parse_date(before, "before"),
                dates_by=dates_by,
                path=path,
                include_superseded=include_superseded,
                include_archived=include_archived,
                diversify=mmr,
            ),
            budget,
        )
        data = {
            "context": recall.text,
            "omitted": recall.omitted,
            "tokens": recall.tokens,
            "degraded": recall.degraded,
            "results": [hit_view(h) for h in recall.hits],
        }
        notes = [recall.text or "No matching records."]
        if recall.omitted:
            notes.append(f"({recall.omitted} more matched but did not fit the budget.)")
        if recall.degraded:
            notes.append(f"Note: {recall.degraded}")
        return reply(data, "\n\n".join(notes))

    @kit.tool(READ)
    def search(
        query: Annotated[
            str, Field(description="What to look for, in words; leave it out to list by kind.")
        ] = "",
        limit: Limit = 10,
        kind: KindArg = None,
        include_superseded: Annotated[
            bool, Field(description="Also replaced records, labelled NOT CURRENT.")
        ] = False,
        project: ProjectArg = None,
        here: Here = NOWHERE,
    ) -> Annotated[CallToolResult, out.SearchResult]:
        """Ranked search over the project's records, its project group's and the global ones."""
        result = app.search.search(
            here.project(),
            SearchQuery(
                text=query,
                limit=limit,
                kinds=(Kind(kind),) if kind else (),
                include_superseded=include_superseded,
            ),
        )
        hits = [hit_view(h) for h in result.hits]
        data = {"results": hits, "degraded": result.degraded}
        return reply(data, hits_text(hits, result.degraded))

    @kit.tool(READ)
    def get_entry(id: RecordId) -> Annotated[CallToolResult, out.RecordDetail]:
        """One record in full; a superseded one names what replaced it."""
        view = detail_view(app.reader.detail(id))
        return reply(view, record_text(view))
