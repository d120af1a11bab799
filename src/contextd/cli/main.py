"""The `contextd` command: the root group and the one place errors become messages."""

import json
import logging
import os
import sys
from typing import Any

import click

from contextd.cli import (
    admin,
    browse,
    bundles,
    capture,
    daemon,
    evaluate,
    export,
    hooks,
    inventory,
    lifecycle,
    mcp_command,
    projects,
    remote,
    sessions,
    setup,
    sync,
)
from contextd.cli._context import common_options, state
from contextd.errors import ContextdError

__all__ = ["cli", "main"]

log = logging.getLogger("contextd")


class ContextdGroup(click.Group):
    """Turns every ContextdError into one sentence on stderr and its exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ContextdError as exc:
            _report(ctx, str(exc), type(exc).__name__, getattr(exc, "field", None))
            ctx.exit(exc.exit_code)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            ctx.exit(130)
        except Exception as exc:  # the top-level handler: a bug must still not dump a traceback
            if os.environ.get("CONTEXTD_DEBUG"):
                raise
            log.debug("unexpected failure", exc_info=True)
            _report(
                ctx,
                f"contextd failed unexpectedly ({type(exc).__name__}: {exc}); "
                "run again with CONTEXTD_DEBUG=1 for details and report it.",
                "InternalError",
                None,
            )
            ctx.exit(70)


def _report(ctx: click.Context, message: str, kind: str, field: str | None) -> None:
    message = " ".join(message.split("\n"))  # one line, whatever a value quoted in it held
    if state(ctx).json:
        error: dict[str, Any] = {"message": message, "type": kind}
        if field:
            error["field"] = field
        click.echo(json.dumps({"error": error}, ensure_ascii=False))
    click.echo(f"Error: {message}", err=True)


@click.group(cls=ContextdGroup, context_settings={"help_option_names": ["-h", "--help"]})
# package_name: click reads the installed version only when --version is asked for.
@click.version_option(None, "--version", "-V", package_name="contextd", prog_name="contextd")
@common_options
def cli() -> None:
    """Project memory for AI coding agents.

    Stores decisions, constraints, workflows, gotchas and checkpoints once, and hands each
    agent session the part that matters.
    """


for module in (
    projects,
    capture,
    lifecycle,
    browse,
    admin,
    evaluate,
    mcp_command,
    hooks,
    daemon,
    sessions,
    inventory,
    export,
    sync,
    setup,
    bundles,
    remote,
):
    for command in module.COMMANDS:
        cli.add_command(command)


def main() -> None:
    """Console-script entry point."""
    try:
        cli.main(prog_name="contextd")
    except BrokenPipeError:  # e.g. `contextd memories | head`
        sys.stderr.close()
        sys.exit(0)
