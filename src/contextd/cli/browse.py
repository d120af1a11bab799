"""show, memories, search, status: reading what is stored."""

import click

from contextd.cli._context import common_options, get_app
from contextd.cli._output import emit, record_block, record_row, table
from contextd.clock import age
from contextd.core.views import detail_view, hit_view, project_view, record_view
from contextd.models import Kind, SearchQuery

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


@click.command()
@click.argument("query")
@click.option("--kind", "kinds", multiple=True, type=_KINDS, help="Only this kind (repeatable).")
@click.option("--tag", "tags", multiple=True, help="Only records with this tag (repeatable).")
@click.option("--limit", type=click.IntRange(1, 200), default=10, show_default=True)
@click.option(
    "--include-superseded",
    is_flag=True,
    help="Also search replaced records (labelled NOT CURRENT).",
)
@click.option("--include-archived", is_flag=True, help="Also search archived records.")
@click.option("--explain", is_flag=True, help="Show each scoring term per hit.")
@common_options
def search(
    query: str,
    kinds: tuple[str, ...],
    tags: tuple[str, ...],
    limit: int,
    include_superseded: bool,
    include_archived: bool,
    explain: bool,
) -> None:
    """Keyword search over the project's records and the global ones."""
    app = get_app()
    project = app.current_project()
    hits = app.search.search(
        project,
        SearchQuery(
            text=query,
            kinds=tuple(Kind(k) for k in kinds),
            tags=tags,
            limit=limit,
            include_superseded=include_superseded,
            include_archived=include_archived,
        ),
    )
    shorts = app.records.short_ids([h.record.id for h in hits])

    def human() -> None:
        if not hits:
            click.echo("No matches. Try other words, or --include-superseded for history.")
            return
        table([record_row(h.record, shorts[h.record.id], extra=f"{h.score:.2f}") for h in hits])
        if explain:
            click.echo()
            for h in hits:
                t = h.terms
                click.echo(
                    f"{shorts[h.record.id]}  fts {t.fts:.3f} + priority {t.priority:.3f} "
                    f"+ recency {t.recency:.3f} + project {t.project_match:.3f} + trust "
                    f"{t.trust:.3f}, x {t.status_multiplier:.2f} = {h.score:.3f}"
                )

    emit(
        {
            "query": query,
            "project": project.slug,
            "results": [hit_view(h, explain=explain) for h in hits],
        },
        human,
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
        for label, value in rows:
            click.echo(f"{label:<13}{value}")
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


COMMANDS = [show, memories, search, status]
