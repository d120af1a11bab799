"""unsupersede, restore, history: taking a change back, and each record's log."""

import click

from contextd.cli._context import common_options, get_app
from contextd.cli._output import emit, table
from contextd.core.reading.views import record_view
from contextd.text.printer import echo

__all__ = ["COMMANDS"]


@click.command()
@click.argument("record_id", metavar="ID")
@common_options
def unsupersede(record_id: str) -> None:
    """Make a superseded record current again (undo `supersede`); links its successor took
    over come back to it. The successor stays as it is."""
    app = get_app()
    record, successor = app.undo.unsupersede(record_id)
    shorts = app.reader.handles([record.id, successor])

    def human() -> None:
        echo(
            f"{shorts[record.id]} ({record.title}) is current again; {shorts[successor]} stays "
            f"as it is (`contextd archive {shorts[successor]}` if it no longer holds)."
        )

    emit({"current": record_view(record), "was_superseded_by": successor}, human)


@click.command()
@click.argument("record_id", metavar="ID")
@common_options
def restore(record_id: str) -> None:
    """Bring a deleted record back as it was (undo `delete`), while its deletion is kept
    (sync.tombstone_retention_days)."""
    app = get_app()
    record = app.undo.restore(record_id)
    short = app.reader.handles([record.id])[record.id]
    emit(record_view(record), lambda: echo(f"Restored {record.kind} {short}: {record.title}"))


@click.command()
@click.argument("record_id", metavar="ID")
@common_options
def history(record_id: str) -> None:
    """Every change of a record: when, what, by whom and through what (cli, mcp and the
    agent's name, http and the token's, web, hook, sync, import)."""
    record_id, handle, changes = get_app().history.of(record_id)

    def human() -> None:
        echo(f"{handle}  {record_id}")
        if not changes:
            echo("No change is logged (the log begins with the contextd that made it).")
            return
        table(
            [[c.at[:19].replace("T", " "), c.event, c.actor or "you", c.via] for c in changes],
            clip_column=None,
        )

    emit(
        {
            "id": record_id,
            "handle": handle,
            "changes": [
                {"at": c.at, "event": c.event, "actor": c.actor, "via": c.via, "title": c.title}
                for c in changes
            ],
        },
        human,
    )


COMMANDS = [unsupersede, restore, history]
