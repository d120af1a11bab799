"""show, memories, search, status: reading what is stored."""

from collections.abc import Sequence
from typing import Any

import click
from msgspec.structs import asdict

from contextd.cli._context import common_options, get_app, option_bundle
from contextd.cli._output import emit, record_block, record_row, table, warn
from contextd.clock import age
from contextd.core.search import MAX_LIMIT, parse_date
from contextd.core.views import detail_view, hit_view, project_view, record_view
from contextd.models import Kind, SearchHit, SearchQuery

__all__ = ["COMMANDS"]

_KINDS = click.Choice([k.value for k in Kind])


@click.command()
@click.argument("record_id", metavar="ID")
@common_options
def show(record_id: str) -> None:
    """Show one record in full, with what replaced it if it is superseded."""
    app = get_app()
    detail = app.records.detail(record_id)
    linked = [
        detail.record.id,
        *detail.record.related_to,
        *(r.id for r in (detail.successor, detail.current) if r),
        *(r.id for r in detail.predecessors),
    ]
    shorts = app.records.short_ids(linked)
    emit(detail_view(detail), lambda: record_block(detail, shorts))


@click.command()
@click.option("--kind", "kinds", multiple=True, type=_KINDS, help="Only this kind (repeatable).")
@click.option("--all", "include_all", is_flag=True, help="Include superseded and archived ones.")
@common_options
def memories(kinds: tuple[str, ...], include_all: bool) -> None:
    """List the project's records and the global ones, newest first."""
    app = get_app()
    project = app.current_project()
    records = app.records.list_records(
        project, kinds=tuple(Kind(k) for k in kinds), include_inactive=include_all
    )
    shorts = app.records.short_ids([r.id for r in records])

    def human() -> None:
        if not records:
            click.echo(f"No records yet in {project.name}; `contextd add` stores one.")
            return
        table([record_row(r, shorts[r.id], extra=age(r.created_at)) for r in records])

    emit({"project": project_view(project), "records": [record_view(r) for r in records]}, human)


query_options = option_bundle(
    click.option(
        "--kind", "kinds", multiple=True, type=_KINDS, help="Only this kind (repeatable)."
    ),
    click.option("--tag", "tags", multiple=True, help="Only records with this tag (repeatable)."),
    click.option("--category", help="Only memories of this category."),
    click.option("--since", metavar="WHEN", help="Created on or after (2026-11-01, 30d, 12h)."),
    click.option("--before", metavar="WHEN", help="Created before (2026-11-01, 30d, 12h)."),
    click.option(
        "--include-superseded",
        is_flag=True,
        help="Also replaced records (labelled NOT CURRENT).",
    ),
    click.option("--include-archived", is_flag=True, help="Also archived records."),
    click.option(
        "--mmr", "diversify", is_flag=True, help="Prefer diverse results over near-duplicates."
    ),
    click.option("--explain", is_flag=True, help="Show each scoring term per hit."),
)
"""The filters `search` and `recall` share."""


def _query(text: str, limit: int, options: dict[str, Any]) -> SearchQuery:
    return SearchQuery(
        text=text,
        kinds=tuple(Kind(k) for k in options["kinds"]),
        tags=options["tags"],
        category=options["category"],
        since=parse_date(options["since"], "--since"),
        before=parse_date(options["before"], "--before"),
        limit=limit,
        include_superseded=options["include_superseded"],
        include_archived=options["include_archived"],
        diversify=options["diversify"],
    )


def _explain_lines(hits: Sequence[SearchHit], shorts: dict[str, str]) -> None:
    for h in hits:
        t = h.terms
        click.echo(
            f"{shorts[h.record.id]}  fts {t.fts:.3f} + semantic {t.semantic:.3f} + "
            f"priority {t.priority:.3f} + recency {t.recency:.3f} + project "
            f"{t.project_match:.3f} + trust {t.trust:.3f}, x {t.status_multiplier:.2f} "
            f"= {h.score:.3f}"
            + (f" (linked from {shorts.get(h.linked_from, '')})" if h.linked_from else "")
        )


@click.command()
@click.argument("query")
@click.option("--limit", type=click.IntRange(1, MAX_LIMIT), default=10, show_default=True)
@query_options
@common_options
def search(query: str, limit: int, explain: bool, **options: Any) -> None:
    """Hybrid search (full-text + meaning) over the project's records and the global ones."""
    app = get_app()
    project = app.current_project()
    result = app.search.search(project, _query(query, limit, options))
    hits = result.hits
    shorts = app.records.short_ids([h.record.id for h in hits])

    def human() -> None:
        if result.degraded:
            warn(f"Note: {result.degraded}.")
        if not hits:
            click.echo("No matches. Try other words, or --include-superseded for history.")
            return
        table(
            [
                record_row(
                    h.record,
                    shorts[h.record.id],
                    extra=f"{h.score:.2f}" + (" linked" if h.linked_from else ""),
                )
                for h in hits
            ]
        )
        if explain:
            click.echo()
            _explain_lines(hits, shorts)

    payload: dict[str, Any] = {
        "query": query,
        "project": project.slug,
        "results": [hit_view(h, explain=explain) for h in hits],
    }
    if result.degraded:
        payload["degraded"] = result.degraded
    emit(payload, human)


@click.command()
@click.argument("query")
@click.option(
    "--budget",
    type=int,
    metavar="TOKENS",
    help="Token budget (default: context.max_context_tokens).",
)
@query_options
@common_options
def recall(query: str, budget: int | None, explain: bool, **options: Any) -> None:
    """The context an agent receives for QUERY, packed into a token budget."""
    app = get_app()
    project = app.current_project()
    packed = app.search.recall(project, _query(query, 10, options), budget)

    def human() -> None:
        if packed.degraded:
            warn(f"Note: {packed.degraded}.")
        click.echo(packed.text or "Nothing relevant stored.")
        click.echo(
            click.style(
                f"\n{len(packed.hits)} passages, ~{packed.tokens}/{packed.budget} tokens"
                + (f", {packed.omitted} more left out for the budget" if packed.omitted else ""),
                fg="bright_black",
            ),
            err=True,
        )
        if explain:
            _explain_lines(packed.hits, {h.record.id: h.record.id[:13] for h in packed.hits})

    payload: dict[str, Any] = {
        "query": query,
        "project": project.slug,
        "budget": packed.budget,
        "tokens": packed.tokens,
        "omitted": packed.omitted,
        "context": packed.text,
        "results": [hit_view(h, explain=explain) for h in packed.hits],
    }
    if packed.degraded:
        payload["degraded"] = packed.degraded
    emit(payload, human)


@click.command()
@click.argument("query")
@click.argument("record_id", metavar="ID")
@common_options
def learn(query: str, record_id: str) -> None:
    """Mark ID as the right answer for QUERY; similar later queries rank it higher."""
    app = get_app()
    record = app.records.get(record_id)
    app.search.learn(app.current_project(), query, record)
    emit(
        {"learned": record.id, "query": query},
        lambda: click.echo(f'Learned: {record.title} answers "{query}".'),
    )


@click.command()
@common_options
def status() -> None:
    """Overview of the current project: git, what is stored, where work stopped."""
    app = get_app()
    report = app.status(app.current_project())
    checkpoint = report.last_checkpoint
    body = checkpoint.body if checkpoint else None
    goal = getattr(body, "goal", "") or None
    next_steps = list(getattr(body, "next", ()))
    payload = {
        "project": project_view(report.project),
        "git": None
        if report.git is None
        else {
            "branch": report.git.branch,
            "commit": report.git.short_sha,
            "dirty": report.git.dirty,
        },
        "counts": {k.value: report.counts.get(k, 0) for k in Kind},
        "last_checkpoint": None if checkpoint is None else record_view(checkpoint),
        "goal": goal,
        "next": next_steps,
        "home": str(report.home),
        "index": asdict(report.index) | {"fix": report.index.fix},
    }

    def human() -> None:
        click.echo(click.style("contextd", bold=True))
        click.echo("─" * 33)
        rows = [("Project", report.project.name)]
        if report.git:
            rows.append(
                (
                    "Branch",
                    f"{report.git.branch or '?'} @ {report.git.short_sha or '-'}"
                    f" ({report.git.dirty} dirty)",
                )
            )
        labels = {
            Kind.MEMORY: "Memories",
            Kind.DECISION: "Decisions",
            Kind.CONSTRAINT: "Constraints",
            Kind.PIPELINE: "Pipelines",
            Kind.CHECKPOINT: "Checkpoints",
        }
        rows += [(labels[k], str(report.counts.get(k, 0))) for k in Kind]
        index = report.index
        if index.provider == "none":
            rows.append(("Semantic", "off (full-text only)"))
        else:
            mark = (
                click.style("✓", fg="green") if index.fix is None else click.style("!", fg="yellow")
            )
            rows.append(("Semantic", f"{mark} {index.embedded}/{index.records} {index.provider}"))
            rows.append(("Vectors", index.backend))
        for label, value in rows:
            click.echo(f"{label:<13}{value}")
        if index.note:
            click.echo(click.style(f"note: {index.note}", fg="yellow"))
        if index.fix:
            click.echo(click.style(f"run `{index.fix}` to bring the index up to date", fg="yellow"))
        if checkpoint:
            click.echo(
                f"\n{click.style('Last checkpoint', bold=True)}\n{checkpoint.title} "
                f"({age(checkpoint.created_at)})"
            )
        if goal:
            click.echo(f"\n{click.style('Current goal', bold=True)}\n{goal}")
        if next_steps:
            click.echo(f"\n{click.style('Next', bold=True)}")
            for step in next_steps:
                click.echo(f"- {step}")

    emit(payload, human)


COMMANDS = [show, memories, search, recall, learn, status]
