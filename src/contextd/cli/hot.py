"""search, recall and the record commands (add, decide, constrain, pipeline, checkpoint), each
built from its row in contextd.client.commands. A command builds the request the daemon's fast
client builds, has it answered as the daemon answers it (contextd.service.answer), in this
process, and prints the answer with the same code: with or without a daemon, the same bytes.
The fast client (contextd.client.quick) runs first; these run when no daemon answers."""

from typing import Any

import click

from contextd.cli._context import common_options, declared_options, get_app, option_bundle, state
from contextd.client import commands
from contextd.client.results import answer_printout
from contextd.service.answer import answer_here
from contextd.text.printer import write

__all__ = ["COMMANDS"]


def _command(command: commands.Command) -> click.Command:
    def run(argument: str, **values: Any) -> None:
        app = get_app()
        as_json = state().json
        place = {
            "home": str(app.settings.home),
            "stamp": "",
            "project": app.settings.project,
            "folder": str(app.settings.cwd),
        }
        asked = commands.request(command, argument, values | {"json": as_json}, place)
        reply = answer_here(app, asked)
        write(answer_printout(command.asks, reply, bool(values.get("explain")), as_json))

    decorate = option_bundle(
        _argument(command),
        declared_options(*command.options),
        common_options,
    )
    return click.command(command.name, help=command.help_text)(decorate(run))


def _argument(command: commands.Command) -> Any:
    """A write's text is required; a search's query may be left out when filters say what
    is wanted (`contextd recall --tag queue`)."""
    if command.asks == "write":
        return click.argument("argument", metavar=command.argument.upper())
    return click.argument(
        "argument", metavar=f"[{command.argument.upper()}]", required=False, default=""
    )


COMMANDS = [_command(command) for command in commands.COMMANDS.values()]
