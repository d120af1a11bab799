"""Tools that record: a memory, a decision, a constraint, a pipeline, a checkpoint."""

from typing import Annotated, Literal

from mcp.types import CallToolResult
from pydantic import Field

from contextd.limits import (
    MIN_PROBLEM_CHARS,
    MIN_PURPOSE_CHARS,
    MIN_REASON_CHARS,
    MIN_WHY_CHARS,
)
from contextd.mcp import outputs as out
from contextd.mcp.connection import Here
from contextd.mcp.project import NOWHERE, ProjectArg
from contextd.mcp.toolkit import (
    WRITE,
    Force,
    Hints,
    OriginArg,
    Related,
    Supersedes,
    Tags,
    Toolkit,
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

Steps = Annotated[list[str], Field(description="The steps, in order, one line each.")]


def register(kit: Toolkit) -> None:
    @kit.tool(WRITE)
    def remember(
        text: Annotated[str, Field(description="The fact, in a sentence that stands alone.")],
        category: Annotated[
            str, Field(description="architecture, convention, gotcha, preference, user, ...")
        ],
        tags: Tags | None = None,
        retrieval_hints: Hints | None = None,
        is_global: Annotated[bool, Field(description="Applies to every project.")] = False,
        related_to: Related | None = None,
        supersedes: Supersedes | None = None,
        origin: OriginArg = "agent",
        force: Force = False,
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
            supersedes=supersedes,
            force=force,
            is_global=is_global,
            here=here,
        )

    @kit.tool(WRITE)
    def record_decision(
        summary: Annotated[str, Field(description="The decision, in one line.")],
        problem: Annotated[
            str,
            Field(
                description=f"The situation that forced a choice ({MIN_PROBLEM_CHARS}+ characters)."
            ),
        ],
        why_chosen: Annotated[
            str, Field(description=f"Why this option won ({MIN_WHY_CHARS}+ characters).")
        ],
        alternatives: Annotated[str, Field(description="What else was considered.")] = "",
        what_we_tried: Annotated[str, Field(description="What was tried, and how it went.")] = "",
        tradeoffs: Annotated[str, Field(description="What this choice costs.")] = "",
        tags: Tags | None = None,
        retrieval_hints: Hints | None = None,
        related_to: Related | None = None,
        supersedes: Supersedes | None = None,
        origin: OriginArg = "agent",
        force: Force = False,
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
            supersedes=supersedes,
            force=force,
            here=here,
        )

    @kit.tool(WRITE)
    def record_constraint(
        rule: Annotated[str, Field(description="The rule that must hold, in one line.")],
        reason: Annotated[
            str,
            Field(description=f"What breaks if it is ignored ({MIN_REASON_CHARS}+ characters)."),
        ],
        hardness: Annotated[
            Literal["absolute", "strong", "advisory"],
            Field(description="absolute: never break it; strong: only with a reason; advisory."),
        ],
        scope: Annotated[
            list[str] | None,
            Field(description="Path globs it covers (.gitignore syntax), e.g. migrations/**."),
        ] = None,
        triggering_incident: Annotated[
            str, Field(description="What happened that made the rule.")
        ] = "",
        tags: Tags | None = None,
        retrieval_hints: Hints | None = None,
        related_to: Related | None = None,
        supersedes: Supersedes | None = None,
        origin: OriginArg = "agent",
        force: Force = False,
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
            supersedes=supersedes,
            force=force,
            here=here,
        )

    @kit.tool(WRITE)
    def record_pipeline(
        name: Annotated[str, Field(description="The workflow's name (release, migration...).")],
        purpose: Annotated[
            str,
            Field(description=f"What the workflow achieves ({MIN_PURPOSE_CHARS}+ characters)."),
        ],
        steps: Steps,
        tags: Tags | None = None,
        retrieval_hints: Hints | None = None,
        related_to: Related | None = None,
        supersedes: Supersedes | None = None,
        origin: OriginArg = "agent",
        force: Force = False,
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
            supersedes=supersedes,
            force=force,
            here=here,
        )

    @kit.tool(WRITE)
    def checkpoint(
        summary: Annotated[str, Field(description="Where work stands, in one line.")],
        goal: Annotated[str, Field(description="What the work is for.")] = "",
        done: Annotated[list[str] | None, Field(description="What is finished.")] = None,
        next: Annotated[list[str] | None, Field(description="What comes next, in order.")] = None,
        problem: Annotated[str, Field(description="What is blocking or unclear.")] = "",
        project: ProjectArg = None,
        here: Here = NOWHERE,
    ) -> Annotated[CallToolResult, out.Written]:
        """Record where work stopped before you end: goal, what is done, what is next."""
        body = CheckpointBody(goal, tuple(done or ()), tuple(next or ()), problem)
        return kit.store(Kind.CHECKPOINT, summary, body, here=here)
