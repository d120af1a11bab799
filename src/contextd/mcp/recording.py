"""Tools that record: a memory, a decision, a constraint, a pipeline, a checkpoint."""

from typing import Annotated, Literal

from mcp.types import CallToolResult
from pydantic import Field

from contextd.mcp import outputs as out
from contextd.mcp.connection import Here
from contextd.mcp.project import NOWHERE, ProjectArg
from contextd.mcp.toolkit import (
    WRITE,
    Force,
    GroupArg,
    Hints,
    OriginArg,
    Priority,
    Related,
    Supersedes,
    Tags,
    Toolkit,
    about,
    title_about,
)
from contextd.models import (
    CheckpointBody,
    ConstraintBody,
    DecisionBody,
    Hardness,
    Kind,
    MemoryBody,
    PipelineBody,
)

__all__ = ["register"]


def register(kit: Toolkit) -> None:
    @kit.tool(WRITE)
    def remember(
        text: Annotated[str, title_about("memory")],
        category: Annotated[str, about("memory", "category")],
        tags: Tags | None = None,
        retrieval_hints: Hints | None = None,
        is_global: Annotated[bool, Field(description="Applies to every project.")] = False,
        related_to: Related | None = None,
        priority: Priority = 3,
        supersedes: Supersedes | None = None,
        origin: OriginArg = "agent",
        force: Force = False,
        group: GroupArg = None,
        project: ProjectArg = None,
        here: Here = NOWHERE,
    ) -> Annotated[CallToolResult, out.Written]:
        """Store a convention, gotcha, architecture fact or preference worth keeping."""
        return kit.store(
            Kind.MEMORY,
            text,
            MemoryBody(),
            origin=origin,
            category=category,
            tags=tags,
            hints=retrieval_hints,
            related=related_to,
            priority=priority,
            supersedes=supersedes,
            force=force,
            is_global=is_global,
            group=group,
            here=here,
        )

    @kit.tool(WRITE)
    def record_decision(
        summary: Annotated[str, title_about("decision")],
        problem: Annotated[str, about("decision", "problem")],
        why_chosen: Annotated[str, about("decision", "why_chosen")],
        alternatives: Annotated[str, about("decision", "alternatives")] = "",
        what_we_tried: Annotated[str, about("decision", "what_we_tried")] = "",
        tradeoffs: Annotated[str, about("decision", "tradeoffs")] = "",
        tags: Tags | None = None,
        retrieval_hints: Hints | None = None,
        related_to: Related | None = None,
        priority: Priority = 3,
        supersedes: Supersedes | None = None,
        origin: OriginArg = "agent",
        force: Force = False,
        group: GroupArg = None,
        project: ProjectArg = None,
        here: Here = NOWHERE,
    ) -> Annotated[CallToolResult, out.Written]:
        """Record a decision whenever you choose between alternatives, with its rationale, so
        a later session does not undo it."""
        body = DecisionBody(problem, why_chosen, alternatives, what_we_tried, tradeoffs)
        return kit.store(
            Kind.DECISION,
            summary,
            body,
            origin=origin,
            tags=tags,
            hints=retrieval_hints,
            related=related_to,
            priority=priority,
            supersedes=supersedes,
            force=force,
            group=group,
            here=here,
        )

    @kit.tool(WRITE)
    def record_constraint(
        rule: Annotated[str, title_about("constraint")],
        reason: Annotated[str, about("constraint", "reason")],
        hardness: Annotated[
            Literal["absolute", "strong", "advisory"], about("constraint", "hardness")
        ],
        scope: Annotated[list[str] | None, about("constraint", "scope")] = None,
        triggering_incident: Annotated[str, about("constraint", "triggering_incident")] = "",
        tags: Tags | None = None,
        retrieval_hints: Hints | None = None,
        related_to: Related | None = None,
        priority: Priority = 3,
        supersedes: Supersedes | None = None,
        origin: OriginArg = "agent",
        force: Force = False,
        group: GroupArg = None,
        project: ProjectArg = None,
        here: Here = NOWHERE,
    ) -> Annotated[CallToolResult, out.Written]:
        """Record a rule that must hold (and where), with the reason behind it."""
        body = ConstraintBody(reason, Hardness(hardness), tuple(scope or ()), triggering_incident)
        return kit.store(
            Kind.CONSTRAINT,
            rule,
            body,
            origin=origin,
            tags=tags,
            hints=retrieval_hints,
            related=related_to,
            priority=priority,
            supersedes=supersedes,
            force=force,
            group=group,
            here=here,
        )

    @kit.tool(WRITE)
    def record_pipeline(
        name: Annotated[str, title_about("pipeline")],
        purpose: Annotated[str, about("pipeline", "purpose")],
        steps: Annotated[list[str], about("pipeline", "steps")],
        tags: Tags | None = None,
        retrieval_hints: Hints | None = None,
        related_to: Related | None = None,
        priority: Priority = 3,
        supersedes: Supersedes | None = None,
        origin: OriginArg = "agent",
        force: Force = False,
        group: GroupArg = None,
        project: ProjectArg = None,
        here: Here = NOWHERE,
    ) -> Annotated[CallToolResult, out.Written]:
        """Record a multi-step workflow (build, release, migration...) as ordered steps."""
        return kit.store(
            Kind.PIPELINE,
            name,
            PipelineBody(purpose, tuple(steps)),
            origin=origin,
            tags=tags,
            hints=retrieval_hints,
            related=related_to,
            priority=priority,
            supersedes=supersedes,
            force=force,
            group=group,
            here=here,
        )

    @kit.tool(WRITE)
    def checkpoint(
        summary: Annotated[str, title_about("checkpoint")],
        goal: Annotated[str, about("checkpoint", "goal")] = "",
        done: Annotated[list[str] | None, about("checkpoint", "done")] = None,
        next: Annotated[list[str] | None, about("checkpoint", "next")] = None,
        problem: Annotated[str, about("checkpoint", "problem")] = "",
        project: ProjectArg = None,
        here: Here = NOWHERE,
    ) -> Annotated[CallToolResult, out.Written]:
        """Record where work stopped before you end: goal, what is done, what is next."""
        body = CheckpointBody(goal, tuple(done or ()), tuple(next or ()), problem)
        return kit.store(Kind.CHECKPOINT, summary, body, here=here)
