"""`contextd share` and `contextd log`: the project's shared records as files in its
repository, and what changed in them."""

import sys

import click
from msgspec.structs import asdict

from contextd.cli._context import common_options, get_app
from contextd.cli._output import emit, table
from contextd.core.recall.presentation import shown_name
from contextd.share.history import Refusal
from contextd.text.grammar import counted
from contextd.text.printer import echo

__all__ = ["COMMANDS"]


@click.command()
@click.option(
    "--check",
    is_flag=True,
    help="Refuse staged record files that hold a secret or break the rules (pre-commit).",
)
@common_options
def share(check: bool) -> None:
    """Keep this project's shared records in its repository, under .contextd/.

    Decisions, constraints, pipelines, conventions and gotchas ([share] records) get one file
    each; commit them like code. A clone that holds .contextd/ is shared from its first
    `contextd attach`.
    """
    app = get_app()
    project = app.current_project()
    if check:
        _check(app.shares.check_staged(project))
        return
    outcome = app.shares.share(project)
    payload = {"folder": outcome.folder, "written": outcome.written, "created": outcome.created}

    def human() -> None:
        verb = "Shared memory is on" if outcome.created else "Shared memory was already on"
        echo(f"{verb} in {outcome.folder}: {counted(outcome.written, 'record')} written there.")
        if outcome.written:
            echo("Commit the folder to share them; `git status` shows the new files.")

    emit(payload, human)


def _check(refused: list[Refusal]) -> None:
    def human() -> None:
        for refusal in refused:
            echo(f"{shown_name(refusal.path)}: {shown_name(refusal.reason, 400)}", err=True)

    emit({"refused": [asdict(r) for r in refused]}, human)
    if refused:
        echo(
            f"contextd: {len(refused)} record files must not be committed as they are; fix "
            "them (a secret belongs in your secret store, not in project memory).",
            err=True,
        )
        sys.exit(1)


@click.command()
@click.argument("span", required=False, metavar="[REV..REV]")
@common_options
def log(span: str | None) -> None:
    """What changed in the shared memory between two revisions (default: since HEAD, with
    uncommitted files): decisions added, superseded, constraints changed."""
    app = get_app()
    found = app.shares.log(app.current_project(), span)

    def human() -> None:
        if not found:
            echo("No shared record changed.")
            return
        rows = []
        for change in found:
            detail = ", ".join(change.fields)
            if change.superseded_by:
                detail = f"by {change.superseded_by[:13]}"
            rows.append([change.what, change.kind, change.id[:13], change.title, detail])
        table(rows)

    emit({"span": span or "HEAD", "changes": [asdict(c) for c in found]}, human, long=True)


COMMANDS = [share, log]
