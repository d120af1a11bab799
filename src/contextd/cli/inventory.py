"""inventory: a survey of the whole store, project by project."""

import click

from contextd.cli._context import common_options, get_app
from contextd.cli._output import KIND_HEADINGS, emit, table
from contextd.client.printer import echo, style
from contextd.clock import age
from contextd.core.workspace.inventory import Inventory, ProjectSurvey, ScopeCounts, inventory_view
from contextd.models import Kind, Status

__all__ = ["COMMANDS"]

_COLUMNS = {
    Kind.MEMORY: "mem",
    Kind.DECISION: "dec",
    Kind.CONSTRAINT: "con",
    Kind.PIPELINE: "pipe",
    Kind.CHECKPOINT: "ckpt",
}


@click.command()
@click.option("--detail", is_flag=True, help="Add kind, status and category breakdowns and paths.")
@common_options
def inventory(detail: bool) -> None:
    """Survey the store: counts, last activity and last checkpoint of every project, the
    global records, and the embeddings and vector backend in use."""
    survey = get_app().inventory()
    emit(inventory_view(survey, detail=detail), lambda: _print(survey, detail))


def _split(counts: ScopeCounts, kind: Kind | None = None) -> str:
    """'124 (118 current, 6 superseded)', or just '18' when all are current."""
    total = counts.total if kind is None else counts.kind(kind)
    parts = []
    for status, label in ((Status.SUPERSEDED, "superseded"), (Status.ARCHIVED, "archived")):
        n = counts.status(status) if kind is None else counts.kind(kind, status)
        if n:
            parts.append(f"{n} {label}")
    if not parts:
        return str(total)
    active = counts.status(Status.ACTIVE) if kind is None else counts.kind(kind, Status.ACTIVE)
    return f"{total} ({', '.join([f'{active} current', *parts])})"


def _print(survey: Inventory, detail: bool) -> None:
    echo(style(f"contextd inventory  {survey.home}", bold=True))
    echo("─" * 33)
    totals = survey.totals
    rows = [("Records", _split(totals))]
    rows += [(KIND_HEADINGS[k], _split(totals, k)) for k in Kind if totals.kind(k)]
    last = survey.last_activity
    rows.append(("Last activity", age(last) if last else "none yet"))
    index = survey.index
    embeddings = (
        "off (full-text only)"
        if index.provider == "none"
        else f"{index.provider} · {index.embedded}/{index.records} embedded"
    )
    rows.append(("Embeddings", f"{embeddings} · vectors in {survey.vector_backend}"))
    for label, value in rows:
        echo(f"{label:<15}{value}")
    if index.note:
        echo(style(f"note: {index.note}", fg="yellow"))
    echo()
    if not survey.projects:
        echo("No projects yet; `contextd attach` in a project's folder adds one.")
    else:
        _project_table(survey.projects)
    _global_line(survey.global_counts)
    if detail:
        for item in survey.projects:
            _project_detail(item)


def _project_table(projects: tuple[ProjectSurvey, ...]) -> None:
    header = ["project", *_COLUMNS.values(), "old", "last activity", "last checkpoint"]
    rows = [[style(cell, bold=True) for cell in header]]
    for item in projects:
        counts = item.counts
        old = counts.status(Status.SUPERSEDED) + counts.status(Status.ARCHIVED)
        rows.append(
            [
                item.project.name,
                *(str(counts.kind(k, Status.ACTIVE)) for k in _COLUMNS),
                str(old),
                age(item.last_activity) if item.last_activity else "-",
                item.last_checkpoint.title if item.last_checkpoint else "-",
            ]
        )
    table(rows, clip_column=len(header) - 1)


def _global_line(counts: ScopeCounts) -> None:
    active = counts.status(Status.ACTIVE)
    if not active:
        echo("\nno global records")
        return
    parts = [f"{n} {name}" for name, n in sorted(counts.categories.items(), key=lambda x: -x[1])]
    parts += [f"{counts.kind(k, Status.ACTIVE)} {k}" for k in Kind if k is not Kind.MEMORY]
    parts = [p for p in parts if not p.startswith("0 ")]
    noun = "record" if active == 1 else "records"
    echo(f"\nplus {active} global {noun}, applying to every project: {', '.join(parts)}")


def _project_detail(item: ProjectSurvey) -> None:
    project = item.project
    counts = item.counts
    echo(f"\n{style(project.name, bold=True)} ({project.slug})")
    if project.git_remote:
        echo(f"  {'remote':<13}{project.git_remote}")
    paths = ", ".join(project.paths) or "none on this machine (`contextd attach` adopts it)"
    echo(f"  {'paths':<13}{paths}")
    for kind in Kind:
        if counts.kind(kind):
            echo(f"  {str(kind):<13}{_split(counts, kind)}")
    if counts.categories:
        categories = ", ".join(f"{name} {n}" for name, n in sorted(counts.categories.items()))
        echo(f"  {'categories':<13}{categories}")


COMMANDS = [inventory]
