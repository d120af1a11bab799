"""export: the briefing written into an agent's instruction file, inside a managed block."""

from pathlib import Path

import click

from contextd.agents.agent_files import Target
from contextd.cli._context import common_options, get_app
from contextd.cli._output import emit
from contextd.text.grammar import counted
from contextd.text.printer import echo

__all__ = ["COMMANDS"]


@click.command()
@click.argument("target", type=click.Choice([t.value for t in Target]))
@click.option(
    "--path",
    type=click.Path(path_type=Path),
    help="The file to write, or a folder to put it in (default: the project's folder).",
)
@click.option("--force", is_flag=True, help="Overwrite a block that was edited by hand.")
@click.option("--check", is_flag=True, help="Exit 1 if the file's block is stale or missing.")
@common_options
def export(target: str, path: Path | None, force: bool, check: bool) -> None:
    """Write the project briefing into CLAUDE.md (claude), AGENTS.md (codex), GEMINI.md
    (gemini), .cursor/rules/contextd.mdc (cursor) or CONTEXTD.md (generic).

    Only the block between <!-- contextd:begin --> and <!-- contextd:end --> is written;
    everything else in the file is left as it is.
    """
    app = get_app()
    project = app.current_project()
    chosen = Target(target)
    where = app.agent_files.target_path(project, chosen, path, app.settings.cwd)
    if check:
        checked = app.agent_files.check(project, chosen, where)
        _report_check(str(where), checked.state, target)
        if not checked.current:
            click.get_current_context().exit(1)
        return
    outcome = app.agent_files.export(project, chosen, where, force=force)
    briefing = outcome.briefing
    payload = {
        "path": str(outcome.path),
        "target": target,
        "action": outcome.action,
        "records": briefing.included,
        "left_out": briefing.omitted,
        "tokens": briefing.tokens,
    }

    def human() -> None:
        verb = {
            "created": "Created",
            "added": "Added the contextd block to",
            "replaced": "Updated the contextd block in",
            "unchanged": "Already current:",
        }[outcome.action]
        left = f", {briefing.omitted} left out for the budget" if briefing.omitted else ""
        echo(f"{verb} {outcome.path} ({counted(briefing.included, 'record')}{left}).")

    emit(payload, human)


def _report_check(path: str, state: str, target: str) -> None:
    def human() -> None:
        message = {
            "current": f"{path} is current.",
            "stale": f"{path} is stale; run `contextd export {target}` to update it.",
            "missing": f"{path} has no contextd block; run `contextd export {target}` to write it.",
        }[state]
        echo(message, err=state != "current")

    emit({"path": path, "state": state, "current": state == "current"}, human)


COMMANDS = [export]
