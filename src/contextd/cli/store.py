"""`contextd store copy --to TARGET`: move the whole store to a team server or back into an
SQLite file."""

import click

from contextd.cli._context import common_options, get_app
from contextd.cli._groups import SuggestingGroup
from contextd.cli._output import emit
from contextd.text.printer import echo

__all__ = ["COMMANDS"]

_LABELS = {
    "projects": "projects",
    "records": "records",
    "sessions": "sessions",
    "embeddings": "vectors",
    "tombstones": "tombstones",
}


@click.group(cls=SuggestingGroup)
def store() -> None:
    """The store itself: where it is and moving it."""


@store.command("copy")
@click.option(
    "--to",
    "target",
    required=True,
    metavar="URL|FILE",
    help="A postgresql://USER@HOST/DB URL (password in PGPASSWORD or ~/.pgpass) or a new "
    "SQLite file.",
)
@common_options
def copy(target: str) -> None:
    """Copy every record, project, session and vector into an empty store; all or nothing."""
    from contextd.core.workspace.store_copy import copy_to

    app = get_app()
    report = copy_to(
        app.db,
        target,
        connect_timeout_s=app.settings.store.connect_timeout_s,
        developer_name=app.settings.store.developer,
    )
    payload = {"from": report.source, "to": report.target, "copied": report.copied}

    def human() -> None:
        shown = ", ".join(f"{report.copied[t]:,} {label}" for t, label in _LABELS.items())
        others = sum(n for t, n in report.copied.items() if t not in _LABELS)
        echo(f"Copied {shown} and {others:,} other rows to {report.target}.")

    emit(payload, human)


COMMANDS = [store]
