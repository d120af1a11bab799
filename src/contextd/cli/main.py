"""The `contextd` command: the root group and the one place errors become messages."""

import importlib
import logging
import os
import sys
from typing import Any

import click

from contextd import DISTRIBUTION
from contextd.cli._context import common_options, state
from contextd.cli._groups import SuggestingGroup
from contextd.errors import ContextdError
from contextd.text.printer import echo, use_colour, write
from contextd.text.words import error_printout, in_cli_words

__all__ = ["cli", "main"]

log = logging.getLogger("contextd")


# Each command's module under contextd.cli, imported only when the command runs (or for
# --help): `contextd search` does not pay for setup's TOML editor or sync's ssh code.
COMMAND_MODULES = {
    "init": "projects",
    "attach": "projects",
    "detach": "projects",
    "group": "groups",
    "add": "hot",
    "decide": "hot",
    "constrain": "hot",
    "pipeline": "hot",
    "checkpoint": "hot",
    "show": "browse",
    "memories": "browse",
    "search": "hot",
    "recall": "hot",
    "learn": "browse",
    "status": "status",
    "update": "lifecycle",
    "supersede": "lifecycle",
    "archive": "lifecycle",
    "unarchive": "lifecycle",
    "delete": "lifecycle",
    "unsupersede": "undo",
    "restore": "undo",
    "history": "undo",
    "verify": "lifecycle",
    "stale": "lifecycle",
    "quality": "lifecycle",
    "session": "sessions",
    "review": "review",
    "inventory": "inventory",
    "export": "export",
    "sync": "sync",
    "share": "share",
    "log": "share",
    "bundle": "bundles",
    "import": "imports",
    "remote": "remote",
    "config": "admin",
    "refresh": "refresh",
    "eval": "evaluate",
    "setup": "setup",
    "hook": "hooks",
    "compaction-report": "hooks",
    "capture-extract": "hooks",
    "daemon": "daemon",
    "mcp": "mcp_command",
    "ui": "ui",
    "serve": "serve",
    "token": "tokens",
    "store": "store",
    "completion": "completion",
    "model": "model",
    "doctor": "doctor",
}


class ContextdGroup(SuggestingGroup):
    """Loads each command on demand, and turns every ContextdError into one sentence on stderr
    and its exit code."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMAND_MODULES)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        use_colour("auto")  # each run starts from the environment: --color is one run's
        return super().make_context(info_name, args, parent, **extra)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module_name = COMMAND_MODULES.get(cmd_name)
        if module_name is None:
            return None
        module = importlib.import_module(f"contextd.cli.{module_name}")
        commands: list[click.Command] = module.COMMANDS
        return next(c for c in commands if c.name == cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ContextdError as exc:
            _report(ctx, in_cli_words(exc), type(exc).__name__, getattr(exc, "field", None))
            ctx.exit(exc.exit_code)
        except (click.exceptions.Exit, click.ClickException, click.Abort, BrokenPipeError):
            raise  # BrokenPipeError: the reader left (`| head`); main() ends quietly
        except KeyboardInterrupt:
            echo("Interrupted.", err=True)
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
    write(error_printout(message, kind, field, state(ctx).json))


@click.group(cls=ContextdGroup, context_settings={"help_option_names": ["-h", "--help"]})
# package_name: click reads the installed version only when --version is asked for.
@click.version_option(None, "--version", "-V", package_name=DISTRIBUTION, prog_name="contextd")
@common_options
def cli() -> None:
    """Project memory for AI coding agents.

    Stores decisions, constraints, workflows, gotchas and checkpoints once, and hands each
    agent session the part that matters.
    """


def main() -> None:
    """Console-script entry point."""
    try:
        cli.main(prog_name="contextd")
    except BrokenPipeError:  # e.g. `contextd memories | head`
        sys.stderr.close()
        sys.exit(0)
