"""show, memories, learn: reading what is stored (search and recall: contextd.cli.hot)."""

from collections.abc import Callable
from typing import Any, TypeVar

import click

from contextd.cli._context import common_options, get_app
from contextd.cli._output import emit, limit_option, more_note, record_block, record_row, table
from contextd.clock import age
from contextd.core.reading.views import detail_view, project_view, record_view
from contextd.models import Kind
from contextd.text.printer import echo

__all__ = ["COMMANDS"]

F = TypeVar("F", bound=Callable[..., Any])

_KINDS = click.Choice([k.value for k in Kind])


@click.command()
@click.argument("record_id", metavar="ID")
@common_options
def show(record_id: str) -> None:
    """Show one record in full, with what replaced it if it is superseded.

    \b
    Examples:
      contextd show 01a23782                # an id's first characters are enough
      contextd show 01a23782 --json
    """
    app = get_app()
    detail = app.reader.detail(record_id)
    linked = [
        detail.record.id,
        *detail.record.related_to,
        *(r.id for r in (detail.successor, detail.current) if r),
        *(r.id for r in detail.predecessors),
    ]
    shorts = app.reader.handles(linked)
    emit(detail_view(detail), lambda: record_block(detail, shorts))


@click.command()
@click.option("--kind", "kinds", multiple=True, type=_KINDS, help="Only this kind (repeatable).")
@click.option("--all", "include_all", is_flag=True, help="Include superseded and archived ones.")
@limit_option()
@common_options
def memories(kinds: tuple[str, ...], include_all: bool, limit: int | None) -> None:
    """List the project's records, its group's and the global ones, newest first (through a
    pager on a terminal).

    \b
    Examples:
      contextd memories                       # every current record
      contextd memories --kind decision --limit 20
      contextd memories --all --json          # with superseded and archived ones
    """
    app = get_app()
    project = app.current_project()
    found = app.reader.list_records(
        project, kinds=tuple(Kind(k) for k in kinds), include_inactive=include_all
    )
    records = found[:limit] if limit else found
    shorts = app.reader.handles([r.id for r in records])
    reach = app.reader.reach(project)

    def human() -> None:
        if not records:
            echo(f"No records yet in {project.name}; `contextd add` stores one.")
            return
        rows = [
            record_row(
                r, shorts[r.id], extra=age(r.created_at), tier=reach.tier(r.project_id) or ""
            )
            for r in records
        ]
        table(rows)

    payload = {"project": project_view(project), "records": [record_view(r) for r in records]}
    emit(payload, human, long=True)
    more_note(len(records), len(found))


@click.command()
@click.argument("query")
@click.argument("record_id", metavar="ID")
@common_options
def learn(query: str, record_id: str) -> None:
    """Mark ID as the right answer for QUERY: it comes first for QUERY, and similar later
    queries rank it higher."""
    app = get_app()
    record = app.reader.get(record_id)
    app.search.learn(app.current_project(), query, record)
    emit(
        {"learned": record.id, "query": query},
        lambda: echo(f'Learned: {record.title} answers "{query}".'),
    )


COMMANDS = [show, memories, learn]
