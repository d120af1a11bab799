"""review [approve|reject|edit]: what agents wrote, waiting for a person ([capture] review)."""

import sys
from typing import Any

import click

from contextd.cli._context import common_options, get_app
from contextd.cli._groups import SuggestingGroup
from contextd.cli._output import emit, table
from contextd.cli.lifecycle import edit_from, edit_options
from contextd.clock import age
from contextd.core.reading.views import record_view
from contextd.core.writing.review import Held, whose
from contextd.errors import InvalidInputError
from contextd.models import Record
from contextd.text.printer import echo, style

__all__ = ["COMMANDS"]


def _view(held: Held) -> dict[str, Any]:
    draft = held.draft
    return {
        "id": held.id,
        "kind": str(draft.kind),
        "title": draft.title,
        "global": held.project_id is None,
        "queued_at": held.queued_at,
        "tags": list(draft.tags),
        "supersedes": list(held.supersedes),
        "asked_by": draft.asked_by,
        "developer": held.developer,
        "request": held.request,
        "target": held.target,
    }


def _asked(held: Held, handles: dict[str, str]) -> str:
    """What a held draft asks for: a new record of its kind, or a change to a stored one."""
    if held.request == "create":
        return f"new {held.draft.kind}"
    return f"{held.request} {handles.get(held.target or '', held.target)}"


def _in_person() -> None:
    """Only a person decides: an agent's shell has no terminal."""
    if not sys.stdin.isatty():
        raise InvalidInputError(
            "Approving or rejecting needs a person at a terminal (or the web view with "
            "--write); an agent cannot decide what the project's memory holds."
        )


@click.group(invoke_without_command=True, cls=SuggestingGroup)
@common_options
@click.pass_context
def review(ctx: click.Context) -> None:
    """What agents wrote, waiting for your approval before it is memory ([capture] review)."""
    if ctx.invoked_subcommand is not None:
        return
    app = get_app()
    project = app.current_project()
    waiting = app.review.waiting(project)
    shorts = app.review.short_ids([h.id for h in waiting])
    handles = app.reader.handles([h.target for h in waiting if h.target])
    readings = app.capture.readings(project) if app.settings.capture.extractor != "none" else []

    def human() -> None:
        if not waiting:
            echo("Nothing waits for review.")
        else:
            echo(f"{len(waiting)} waiting for review (contextd review approve|reject|edit ID):")
            rows = [
                [
                    shorts[h.id],
                    _asked(h, handles),
                    whose(h, app.review.viewer),
                    age(h.queued_at),
                    h.draft.title,
                ]
                for h in waiting
            ]
            table(rows)
        if readings:
            echo("Latest transcript readings ([capture] extractor):")
            table([[r.session_key[:12], age(r.at or ""), r.outcome or ""] for r in readings])

    emit(
        {
            "waiting": [_view(h) | {"short_id": shorts[h.id]} for h in waiting],
            "readings": [
                {"session": r.session_key, "at": r.at, "outcome": r.outcome} for r in readings
            ],
        },
        human,
    )


@review.command()
@click.argument("ids", nargs=-1, required=True, metavar="ID...")
@common_options
def approve(ids: tuple[str, ...]) -> None:
    """Make waiting drafts memory (each is checked again, as any write is)."""
    _in_person()
    app = get_app()
    written = app.review.approve(ids, app.current_project())
    _report(written, "Approved")


def _report(written: list[Record], verb: str) -> None:
    app = get_app()
    shorts = app.reader.handles([r.id for r in written])

    def human() -> None:
        for record in written:
            echo(f"{verb} {record.kind} {style(shorts[record.id], bold=True)}: {record.title}")

    emit({"approved": [record_view(r) for r in written]}, human)


@review.command()
@click.argument("ids", nargs=-1, required=True, metavar="ID...")
@click.option("--reason", default="", help="Why it is turned down (kept with it).")
@common_options
def reject(ids: tuple[str, ...], reason: str) -> None:
    """Turn waiting drafts down; they never become memory."""
    _in_person()
    app = get_app()
    rejected = app.review.reject(ids, app.current_project(), reason)

    def human() -> None:
        for held in rejected:
            echo(f"Rejected {held.draft.kind}: {held.draft.title}")

    emit({"rejected": [_view(h) for h in rejected]}, human)


@review.command()
@click.argument("held_id", metavar="ID")
@edit_options
@common_options
def edit(held_id: str, **values: Any) -> None:
    """Change a waiting draft before approving it (the rules of `update` apply)."""
    app = get_app()
    held = app.review.edit(held_id, app.current_project(), edit_from(values))

    def human() -> None:
        echo(f"Edited the waiting {held.draft.kind}: {held.draft.title}")

    emit({"edited": _view(held)}, human)


COMMANDS = [review]
