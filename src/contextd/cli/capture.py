"""add, decide, constrain, pipeline, checkpoint: recording knowledge of each kind.

The commands are built from their declarations in contextd.client.record_args. With a daemon
running, contextd.client.quick has it store the record before click is imported; these commands
run when none does, or when the daemon declined (a refusal, reported here in CLI words)."""

from typing import Any

import click
import msgspec

from contextd.cli._context import common_options, declared_options, get_app, option_bundle
from contextd.cli._output import report_write
from contextd.client import record_args
from contextd.models import RecordDraft

__all__ = ["COMMANDS"]


def _store(command: str, title: str, values: dict[str, Any]) -> None:
    draft = msgspec.convert(record_args.draft(command, title, values), RecordDraft)
    app = get_app()
    project = None if draft.is_global else app.current_project()
    stored = app.writer.record(
        draft, project, force=values["force"], supersedes=tuple(values["supersedes"])
    )
    report_write("Recorded", stored.record, stored.similar, stored.shorts)


def _record_command(name: str) -> click.Command:
    spec = record_args.RECORD_COMMANDS[name]

    def run(title: str, **values: Any) -> None:
        _store(name, title, values)

    decorate = option_bundle(
        click.argument("title", metavar=spec.argument.upper()),
        declared_options(*spec.options, *record_args.RECORD_OPTIONS),
        common_options,
    )
    return click.command(name, help=spec.help)(decorate(run))


COMMANDS = [_record_command(name) for name in record_args.RECORD_COMMANDS]
