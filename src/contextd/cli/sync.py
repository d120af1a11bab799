"""The `sync` group: records exchanged with other machines (divergences to settle)."""

import click

from contextd.cli._context import common_options
from contextd.cli.remote import conflicts, resolve

__all__ = ["COMMANDS"]


@click.group(invoke_without_command=True)
@common_options
@click.pass_context
def sync(ctx: click.Context) -> None:
    """Keep this store in step with other copies of it."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


sync.add_command(conflicts)
sync.add_command(resolve)

COMMANDS = [sync]
