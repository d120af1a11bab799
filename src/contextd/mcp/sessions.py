"""Tools about the working session: which one this is, ending it, and what a compaction of
the agent's context made it forget."""

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from msgspec.structs import asdict
from pydantic import Field

from contextd.core.recall.compaction import report_text
from contextd.core.recall.presentation import one_line
from contextd.errors import ContextdError
from contextd.mcp import outputs as out
from contextd.mcp.connection import Here, connection_of
from contextd.mcp.project import NOWHERE, ProjectArg, project_line
from contextd.mcp.render import reply
from contextd.mcp.toolkit import READ, WRITE, Toolkit

__all__ = ["register"]


def register(kit: Toolkit) -> None:
    app = kit.app

    @kit.tool(READ)
    def session_info(
        ctx: Context, project: ProjectArg = None, here: Here = NOWHERE
    ) -> Annotated[CallToolResult, out.SessionInfo]:
        """This connection's session: which agent, since when (and the project's last one),
        and which project it works on and how that was decided."""
        resolved = here.project()  # a project it cannot resolve is the call's error
        session_id = connection_of(ctx).session_id
        current = app.sessions.get(session_id) if session_id else None
        latest = current or app.sessions.latest(resolved)
        chosen = project_line(here)
        data = {
            "session": None if latest is None else asdict(latest),
            "this_connection": current is not None,
        } | chosen
        where = f" Project {chosen['project']}, chosen by {chosen['project_from']}."
        if latest is None:
            return reply(data, "No session recorded for this project yet." + where)
        state = "open" if latest.ended_at is None else f"ended {latest.ended_at}"
        whose = "this connection's" if current else "the project's last"
        agent = one_line(latest.agent)
        text = f"Session {latest.id} ({whose}): {agent}, since {latest.started_at}, {state}."
        return reply(data, text + where)

    @kit.tool(WRITE)
    def end_session(
        ctx: Context,
        summary: Annotated[str, Field(description="What this session did, in a line.")] = "",
        project: ProjectArg = None,
        here: Here = NOWHERE,
    ) -> Annotated[CallToolResult, out.SessionOut]:
        """Close this session with a summary of what it did (also closed on disconnect)."""
        here.project()  # a call that resolves the project opens the session it closes
        session_id = connection_of(ctx).session_id
        if session_id is None:
            raise ContextdError(
                "This connection has no open session (no project was resolved when it started)."
            )
        ended = app.sessions.end(session_id, summary or None)
        return reply(asdict(ended), f"Session {ended.id} ended at {ended.ended_at}.")

    @kit.tool(READ)
    def get_compaction_report(
        project: ProjectArg = None, here: Here = NOWHERE
    ) -> Annotated[CallToolResult, out.CompactionReport]:
        """After your context was compacted: the records you had been given that are no
        longer in your context, and what this session recorded. Call it after a compaction."""
        report = app.hook_state.report(here.project())
        if report is None:
            return reply({"report": None}, "No compaction recorded for this project.")
        return reply({"report": report.as_dict()}, report_text(report))
