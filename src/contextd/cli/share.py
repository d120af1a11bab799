"""`contextd share`: the project's shared records as files in its repository."""

import click

from contextd.cli._context import common_options, get_app
from contextd.cli._output import emit

__all__ = ["COMMANDS"]


@click.command()
@common_options
def share() -> None:
    """Keep this project's shared records in its repository, under .contextd/.

    Decisions, constraints, pipelines, conventions and gotchas ([share] records) get one file
    each; commit them like code. A clone that holds .contextd/ is shared from its first
    `contextd attach`.
    """
    app = get_app()
    outcome = app.shares.share(app.current_project())
    payload = {"folder": outcome.folder, "written": outcome.written, "created": outcome.created}

    def human() -> None:
        verb = "Shared memory is on" if outcome.created else "Shared memory was already on"
        click.echo(f"{verb} in {outcome.folder}: {outcome.written} records written there.")
        if outcome.written:
            click.echo("Commit the folder to share them; `git status` shows the new files.")

    emit(payload, human)


COMMANDS = [share]
