"""show, memories, search, recall, learn: reading what is stored."""

import os
from collections.abc import Callable
from typing import Any, TypeVar

import click
from msgspec import to_builtins

from contextd.cli._context import common_options, declared_options, get_app, state
from contextd.cli._output import emit, record_block, record_row, table
from contextd.client import search_args
from contextd.client.printer import echo, write
from contextd.client.results import recall_printout, search_printout
from contextd.clock import age
from contextd.core.reading.views import detail_view, project_view, record_view
from contextd.core.recall.answers import recall_answer, search_answer
from contextd.core.recall.queries import parse_date
from contextd.models import Kind, SearchQuery

__all__ = ["COMMANDS"]

F = TypeVar("F", bound=Callable[..., Any])

_KINDS = click.Choice([k.value for k in Kind])


@click.command()
@click.argument("record_id", metavar="ID")
@common_options
def show(record_id: str) -> None:
    """Show one record in full, with what replaced it if it is superseded."""
    app = get_app()
    detail = app.reader.detail(record_id)
    linked = [
        detail.record.id,
        *detail.record.related_to,
        *(r.id for r in (detail.successor, detail.current) if r),
        *(r.id for r in detail.predecessors),
    ]
    shorts = app.reader.short_ids(linked)
    emit(detail_view(detail), lambda: record_block(detail, shorts))


@click.command()
@click.option("--kind", "kinds", multiple=True, type=_KINDS, help="Only this kind (repeatable).")
@click.option("--all", "include_all", is_flag=True, help="Include superseded and archived ones.")
@common_options
def memories(kinds: tuple[str, ...], include_all: bool) -> None:
    """List the project's records and the global ones, newest first."""
    app = get_app()
    project = app.current_project()
    records = app.reader.list_records(
        project, kinds=tuple(Kind(k) for k in kinds), include_inactive=include_all
    )
    shorts = app.reader.short_ids([r.id for r in records])

    def human() -> None:
        if not records:
            echo(f"No records yet in {project.name}; `contextd add` stores one.")
            return
        table([record_row(r, shorts[r.id], extra=age(r.created_at)) for r in records])

    emit({"project": project_view(project), "records": [record_view(r) for r in records]}, human)


def _options_of(command: str) -> Callable[[F], F]:
    """The options of `search` or `recall`: the command's own, then the shared filters."""
    return declared_options(*search_args.COMMAND_OPTIONS[command], *search_args.QUERY_OPTIONS)


def _query(text: str, limit: int, options: dict[str, Any]) -> SearchQuery:
    return SearchQuery(
        text=text,
        kinds=tuple(Kind(k) for k in options["kinds"]),
        tags=options["tags"],
        category=options["category"],
        since=parse_date(options["since"], "--since"),
        before=parse_date(options["before"], "--before"),
        dates_by=options["dates_by"] or "created",
        path=os.path.join(os.getcwd(), options["path"]) if options["path"] else None,
        limit=limit,
        include_superseded=options["include_superseded"],
        include_archived=options["include_archived"],
        diversify=options["diversify"],
    )


@click.command()
@click.argument("query")
@_options_of("search")
@common_options
def search(query: str, limit: int, explain: bool, **options: Any) -> None:
    """Hybrid search (full-text + meaning) over the project's records and the global ones."""
    app = get_app()
    project = app.current_project()
    found = search_answer(
        app.search, app.reader.short_ids, project, _query(query, limit, options), explain
    )
    write(search_printout(to_builtins(found), explain, state().json))


@click.command()
@click.argument("query")
@_options_of("recall")
@common_options
def recall(query: str, budget: int | None, explain: bool, **options: Any) -> None:
    """The context an agent receives for QUERY, packed into a token budget."""
    app = get_app()
    project = app.current_project()
    packed = recall_answer(app.search, project, _query(query, 10, options), budget, explain)
    write(recall_printout(to_builtins(packed), explain, state().json))


@click.command()
@click.argument("query")
@click.argument("record_id", metavar="ID")
@common_options
def learn(query: str, record_id: str) -> None:
    """Mark ID as the right answer for QUERY; similar later queries rank it higher."""
    app = get_app()
    record = app.reader.get(record_id)
    app.search.learn(app.current_project(), query, record)
    emit(
        {"learned": record.id, "query": query},
        lambda: echo(f'Learned: {record.title} answers "{query}".'),
    )


COMMANDS = [show, memories, search, recall, learn]
