"""`contextd hook EVENT` (also reached without click, see contextd.__main__) and
`contextd compaction-report`."""

import sys

import click

from contextd.cli._context import common_options, get_app
from contextd.cli._output import emit
from contextd.client.hook import EVENTS, run_hook
from contextd.client.printer import echo
from contextd.core.recall.compaction import report_text

__all__ = ["COMMANDS"]


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("event", type=click.Choice(EVENTS))
def hook(event: str) -> None:
    """Answer an agent hook: the hook's JSON on stdin, the agent's context on stdout.

    Never fails the agent: errors go to $CONTEXTD_HOME/hook.log and the exit code is 0.
    """
    from contextd.hooks.inprocess import answer_in_process
    from contextd.hooks.logline import failure_detail

    sys.exit(run_hook([event], answer_in_process, failure_detail))


@click.command("compaction-report")
@common_options
def compaction_report() -> None:
    """What the last context compaction of an agent session made it forget."""
    app = get_app()
    report = app.hook_state.report(app.current_project())
    if report is None:
        emit({"report": None}, lambda: echo("No compaction recorded for this project."))
        return
    emit({"report": report.as_dict()}, lambda: echo(report_text(report)))


COMMANDS = [hook, compaction_report]
