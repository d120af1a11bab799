"""Tools that keep the memory true: records due for a check, and quality problems."""

from typing import Annotated

from mcp.types import CallToolResult
from pydantic import Field

from contextd.core.reading.views import record_view
from contextd.core.recall.presentation import one_line
from contextd.core.upkeep.quality import scan_quality
from contextd.mcp import outputs as out
from contextd.mcp.connection import Here
from contextd.mcp.messages import quality_fix
from contextd.mcp.project import NOWHERE, ProjectArg
from contextd.mcp.render import fenced_lines, reply
from contextd.mcp.toolkit import READ, Toolkit
from contextd.text.grammar import counted

__all__ = ["register"]


def register(kit: Toolkit) -> None:
    app = kit.app

    @kit.tool(READ)
    def prune_stale(
        days: Annotated[
            int | None, Field(ge=0, description="Days since last verified (default: config).")
        ] = None,
        project: ProjectArg = None,
        here: Here = NOWHERE,
    ) -> Annotated[CallToolResult, out.StaleRecords]:
        """List records not verified recently, to verify_entry or archive them."""
        limit = app.settings.lifecycle.stale_days if days is None else days
        stale = app.reader.stale(here.project(), limit)
        data = {"days": limit, "records": [record_view(r) for r in stale]}
        lines = [f"{r.id} {one_line(r.title)} (verified {r.verified_at[:10]})" for r in stale]
        head = f"{counted(len(stale), 'record')} not verified in {counted(limit, 'day')}"
        return reply(data, fenced_lines(head + (":" if stale else "."), lines))

    @kit.tool(READ)
    def verify_quality(
        project: ProjectArg = None, here: Here = NOWHERE
    ) -> Annotated[CallToolResult, out.QualityReport]:
        """Find duplicates, thin rationale, missing tags, isolated and stale records, with
        fixes."""
        scoped = here.project()
        duplicates = app.consolidation.survey(scoped).merges
        issues = scan_quality(
            app.reader, scoped, app.settings.lifecycle.stale_days, duplicates=duplicates
        )
        found = [
            {"kind": i.kind, "id": i.record.id, "title": i.record.title}
            | {"detail": i.detail, "fix": quality_fix(i)}
            for i in issues
        ]
        lines = [
            f"{f['kind']}: {f['id']} {one_line(f['title'])} - {f['detail']} Fix: {f['fix']}"
            for f in found
        ]
        return reply(
            {"issues": found},
            fenced_lines("Quality issues:", lines) if lines else "No quality issues found.",
        )
