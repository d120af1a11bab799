"""`contextd hook EVENT` (also reached without click, see contextd.__main__) and
`contextd compaction-report`."""

import sys

import click

from contextd.cli._context import common_options, get_app
from contextd.cli._output import emit
from contextd.client.hook import run_hook
from contextd.core.recall.compaction import report_text
from contextd.text.printer import echo
from contextd.wire.hook_events import EVENTS

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


@click.command("capture-extract")
@click.option("--project-id", required=True)
@click.option("--session", "session_key", required=True)
@click.option("--transcript", required=True, type=click.Path(dir_okay=False))
@common_options
def capture_extract(project_id: str, session_key: str, transcript: str) -> None:
    """Read a session's transcript for proposals to review ([capture] extractor).

    The stop and session-end hooks start it, detached; one reading runs at a time per home.
    """
    import fcntl
    import os
    import signal
    from pathlib import Path

    from contextd.clock import now
    from contextd.errors import NotFoundError
    from contextd.home_folder import open_private

    app = get_app()
    settings = app.settings
    signal.alarm(int(settings.capture.timeout_s) + 120)  # whatever hangs, this process ends
    project = app.projects.get(project_id)
    if project is None:
        raise NotFoundError(f"No project has the id {project_id[:40]}.")
    extractor = app.extractor
    lock = open_private(settings.home / "extract.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the next reading starts where this one ends
        done = extractor.run(project, session_key, Path(transcript))
    finally:
        os.close(lock)
    # One line a reading on stderr, which the hooks point at <home>/extract.log: the session
    # row keeps only the last reading's outcome.
    echo(f"{now()} session {session_key[:12]}: {done.outcome}", err=True)
    emit({"outcome": done.outcome, "queued": list(done.queued)}, lambda: echo(done.outcome))


COMMANDS = [hook, compaction_report, capture_extract]
