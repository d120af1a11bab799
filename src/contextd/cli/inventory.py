"""inventory: a survey of the whole store, project by project."""

from typing import Any

import click

from contextd.app import App
from contextd.cli._context import common_options, get_app
from contextd.cli._output import emit
from contextd.cli.survey import print_summary
from contextd.core.workspace.inventory import Inventory, inventory_view
from contextd.sync.summary import store_summary

__all__ = ["COMMANDS"]


@click.command()
@click.option("--detail", is_flag=True, help="Add kind, status and category breakdowns and paths.")
@common_options
def inventory(detail: bool) -> None:
    """Survey the store: counts, last activity and last checkpoint of every project, the
    global records, and the embeddings and vector backend in use."""
    app = get_app()
    survey = app.inventory()
    emit(
        inventory_view(survey, detail=detail),
        lambda: print_summary(_text_view(app, survey, detail), "this store", detail=detail),
    )


def _text_view(app: App, survey: Inventory, detail: bool) -> dict[str, Any]:
    """The summary another machine's `remote scan` gets, with what this store shows only
    itself: its checkpoints' titles, its folders, how many records have a vector."""
    view = store_summary(app.db, survey, detail=detail)
    for shown, item in zip(view["projects"], survey.projects, strict=True):
        if item.last_checkpoint is not None:
            shown["last_checkpoint"]["title"] = item.last_checkpoint.title
        if detail:
            shown["paths"] = list(item.project.paths)
    index = survey.index
    view["embedded"] = f"{index.embedded}/{index.records} embedded"
    view["note"] = index.note
    return view


COMMANDS = [inventory]
