"""add, decide, constrain, pipeline, checkpoint: recording knowledge of each kind."""

from typing import Any

import click

from contextd.cli._context import common_options, get_app, option_bundle
from contextd.cli._daemon import stored_by_daemon
from contextd.cli._output import report_write
from contextd.limits import MIN_PROBLEM_CHARS, MIN_PURPOSE_CHARS, MIN_REASON_CHARS, MIN_WHY_CHARS
from contextd.models import (
    CheckpointBody,
    ConstraintBody,
    DecisionBody,
    Hardness,
    Kind,
    MemoryBody,
    Origin,
    PipelineBody,
    RecordDraft,
)

__all__ = ["COMMANDS"]


record_options = option_bundle(
    click.option("--tag", "tags", multiple=True, metavar="TAG", help="A tag (repeatable)."),
    click.option(
        "--hint",
        "hints",
        multiple=True,
        metavar="TEXT",
        help="Another phrasing a later search might use (repeatable, 2-4 is best).",
    ),
    click.option(
        "--global",
        "is_global",
        is_flag=True,
        help="Applies to every project, not just this one.",
    ),
    click.option(
        "--private",
        is_flag=True,
        help="Keep it in this store only, never in a shared project's repository files.",
    ),
    click.option(
        "--priority",
        type=click.IntRange(1, 5),
        default=3,
        show_default=True,
        help="1 (low) to 5 (critical).",
    ),
    click.option(
        "--origin",
        type=click.Choice([o.value for o in Origin]),
        default="user",
        show_default=True,
        help="Who stated it: trust is user > agent > import.",
    ),
    click.option(
        "--related",
        "related",
        multiple=True,
        metavar="ID",
        help="Id of a related record (repeatable).",
    ),
    click.option("--force", is_flag=True, help="Store it even if it restates a stored record."),
    click.option(
        "--supersedes",
        multiple=True,
        metavar="ID",
        help="Mark this older record as replaced by the new one (repeatable).",
    ),
)
"""Options every record command shares."""


def _store(
    kind: Kind,
    title: str,
    body: Any,
    *,
    category: str | None = None,
    tags: tuple[str, ...],
    hints: tuple[str, ...],
    is_global: bool,
    private: bool,
    priority: int,
    origin: str,
    related: tuple[str, ...],
    force: bool,
    supersedes: tuple[str, ...],
) -> None:
    draft = RecordDraft(
        kind=kind,
        title=title,
        body=body,
        category=category,
        tags=tags,
        retrieval_hints=hints,
        origin=Origin(origin),
        priority=priority,
        related_to=related,
        is_global=is_global,
        private=private,
    )
    stored = stored_by_daemon(draft, force=force, supersedes=supersedes)
    if stored is None:
        app = get_app()
        project = None if is_global else app.current_project()
        stored = app.writer.record(draft, project, force=force, supersedes=supersedes)
    report_write("Recorded", stored.record, stored.similar, stored.shorts)


@click.command()
@click.argument("text")
@click.option(
    "--category",
    required=True,
    metavar="C",
    help="architecture, convention, gotcha, preference, user, ...",
)
@record_options
@common_options
def add(text: str, category: str, **shared: Any) -> None:
    """Remember a fact, convention, gotcha or preference."""
    _store(Kind.MEMORY, text, MemoryBody(), category=category, **shared)


@click.command()
@click.argument("summary")
@click.option(
    "--problem",
    required=True,
    help=f"The situation that forced a choice ({MIN_PROBLEM_CHARS}+ characters).",
)
@click.option("--why", required=True, help=f"Why this option won ({MIN_WHY_CHARS}+ characters).")
@click.option("--alternatives", default="", help="What else was considered.")
@click.option("--tried", default="", help="What was tried, and what happened.")
@click.option("--tradeoffs", default="", help="What this choice costs.")
@record_options
@common_options
def decide(
    summary: str,
    problem: str,
    why: str,
    alternatives: str,
    tried: str,
    tradeoffs: str,
    **shared: Any,
) -> None:
    """Record a decision with its rationale."""
    body = DecisionBody(
        problem=problem,
        why_chosen=why,
        alternatives=alternatives,
        what_we_tried=tried,
        tradeoffs=tradeoffs,
    )
    _store(Kind.DECISION, summary, body, **shared)


@click.command()
@click.argument("rule")
@click.option(
    "--reason",
    required=True,
    help=f"What breaks if the rule is ignored ({MIN_REASON_CHARS}+ characters).",
)
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    metavar="GLOB",
    help="Path glob the rule covers, e.g. 'migrations/**' (repeatable).",
)
@click.option(
    "--hardness",
    required=True,
    type=click.Choice([h.value for h in Hardness]),
    help="How binding the rule is.",
)
@click.option("--incident", default="", help="What happened that made the rule necessary.")
@record_options
@common_options
def constrain(
    rule: str, reason: str, scopes: tuple[str, ...], hardness: str, incident: str, **shared: Any
) -> None:
    """Record a rule that must hold, with its reason and scope."""
    body = ConstraintBody(
        reason=reason, hardness=Hardness(hardness), scope=scopes, triggering_incident=incident
    )
    _store(Kind.CONSTRAINT, rule, body, **shared)


@click.command()
@click.argument("name")
@click.option(
    "--purpose",
    required=True,
    help=f"What the workflow achieves ({MIN_PURPOSE_CHARS}+ characters).",
)
@click.option(
    "--step",
    "steps",
    multiple=True,
    required=True,
    metavar="S",
    help="One step, in order (repeat for each).",
)
@record_options
@common_options
def pipeline(name: str, purpose: str, steps: tuple[str, ...], **shared: Any) -> None:
    """Record a workflow as ordered steps."""
    _store(Kind.PIPELINE, name, PipelineBody(purpose=purpose, steps=steps), **shared)


@click.command()
@click.argument("summary")
@click.option("--goal", default="", help="What the work is for.")
@click.option("--done", multiple=True, metavar="D", help="Something finished (repeatable).")
@click.option(
    "--next", "next_steps", multiple=True, metavar="N", help="The next step (repeatable)."
)
@click.option("--problem", default="", help="An open problem.")
@record_options
@common_options
def checkpoint(
    summary: str,
    goal: str,
    done: tuple[str, ...],
    next_steps: tuple[str, ...],
    problem: str,
    **shared: Any,
) -> None:
    """Record where work stopped: goal, what is done, what is next."""
    body = CheckpointBody(goal=goal, done=done, next=next_steps, problem=problem)
    _store(Kind.CHECKPOINT, summary, body, **shared)


COMMANDS = [add, decide, constrain, pipeline, checkpoint]
