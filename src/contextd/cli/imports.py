"""import adr | context-keeper | kept: another tool's memory brought in as this project's
records."""

from collections.abc import Callable
from pathlib import Path

import click

from contextd.cli._context import common_options, get_app
from contextd.cli._groups import SuggestingGroup
from contextd.cli._output import emit, table
from contextd.cli._progress import progress_bar
from contextd.importers import (
    Importer,
    ImportReport,
    SourceEntry,
    read_adrs,
    read_context_keeper,
    read_kept,
)
from contextd.text.printer import clip, echo, style

__all__ = ["COMMANDS"]

_REFUSED_EXIT = 2  # a refused entry is bad input, like a refused write
_BAR_FROM = 50  # entries; each is embedded, so a big import takes a while

dry_run_option = click.option(
    "--dry-run",
    is_flag=True,
    help="Check every entry and report what would be imported; write nothing.",
)


@click.group(name="import", cls=SuggestingGroup)
@common_options
def import_group() -> None:
    """Bring in the memory another tool kept, as records of the current project (origin
    `import`). Every entry passes the usual checks: secrets and duplicates are refused, and a
    record already stored counts as such, so running an import again adds nothing. An entry
    refused is named and left out (exit 2); the rest are imported. One the source has not
    decided (a proposed ADR) waits in `contextd review` instead of becoming memory."""


@import_group.command(name="adr")
@click.argument("folder", type=click.Path(path_type=Path))
@dry_run_option
@common_options
def adr(folder: Path, dry_run: bool) -> None:
    """Import a folder of Architecture Decision Records (one Markdown file each, such as
    docs/adr/0001-record-architecture-decisions.md) as decisions, with the status and
    supersession each ADR states."""
    _run("adr", folder, read_adrs, dry_run)


@import_group.command(name="context-keeper")
@click.argument("folder", type=click.Path(path_type=Path))
@dry_run_option
@common_options
def context_keeper(folder: Path, dry_run: bool) -> None:
    """Import context-keeper's decisions, constraints and pipelines from FOLDER (a project
    holding .context/, or the .context folder itself)."""
    _run("context-keeper", folder, read_context_keeper, dry_run)


@import_group.command(name="kept")
@click.argument("folder", type=click.Path(path_type=Path))
@dry_run_option
@common_options
def kept(folder: Path, dry_run: bool) -> None:
    """Import the Markdown notes of one Kept project from FOLDER (<root>/<family>/<project>,
    or a root or family folder holding a single project)."""
    _run("kept", folder, read_kept, dry_run)


def _run(
    source: str, folder: Path, read: Callable[[Path], list[SourceEntry]], dry_run: bool
) -> None:
    entries = read(folder)  # bad input is reported before the store is opened
    app = get_app()
    project = app.current_project()
    report = ImportReport(source, str(folder), project.slug, dry_run)
    with progress_bar("checking", at_least=_BAR_FROM) as bar:
        Importer(app.writer, app.reader, app.db, app.review).run(
            project, entries, report, bar.update
        )
    shorts = app.reader.handles(_ids(report))
    emit(report.view(), lambda: _print(report, shorts))
    refusal = report.first_refusal()
    if refusal is not None:
        echo(f"Error: {refusal}", err=True)
        click.get_current_context().exit(_REFUSED_EXIT)


def _ids(report: ImportReport) -> list[str]:
    """The ids a person reads in the report: those stored (a dry run stores no new one)."""
    new = {i.record_id for i in report.imported}
    stored = [a.record_id for a in report.already_stored if a.record_id not in new]
    retired = [i for r in report.retired for i in (r.record_id, r.successor_id)]
    edited = [i.record_id for i in report.updated]
    return ([] if report.dry_run else list(new)) + stored + edited + retired


def _print(report: ImportReport, shorts: dict[str, str]) -> None:
    if not report.total:
        echo(f"Nothing to import: {report.folder} holds no {report.what}.")
        return
    verb = "Would import" if report.dry_run else "Imported"
    stored = f"; {len(report.already_stored)} already stored" if report.already_stored else ""
    updated = ""
    if report.updated:
        updated = f"; {'would update' if report.dry_run else 'updated'} {len(report.updated)}"
    echo(
        f"{verb} {len(report.imported)} of {report.total} {report.what} from "
        f"{report.folder} into {report.project}{stored}{updated}."
    )
    table(
        [
            [
                i.source_id,
                shorts.get(i.record_id, "new"),
                i.label,
                "" if i.status == "active" else str(i.status),
                clip(i.title.split("\n", 1)[0], 70),
            ]
            for i in report.imported
        ],
        clip_column=4,
    )
    for edited in report.updated:
        verb = "Would update" if report.dry_run else "Updated"
        echo(
            f"{verb} {shorts.get(edited.record_id, edited.record_id)} from "
            f"{edited.source_id}: its text was edited in the source since it was imported."
        )
    if report.proposed:
        held = "would wait" if report.dry_run else "wait"
        named = ", ".join(p.source_id for p in report.proposed)
        echo(f"Proposed, not decided: {named}; {held} for review (`contextd review`).")
    for stored_entry in report.already_stored:
        record = shorts.get(stored_entry.record_id, "a record of this import")
        echo(f"Already stored: {stored_entry.source_id} as {record}.")
    for change in report.retired:
        verb = "Would mark" if report.dry_run else "Marked"
        old, new = (shorts.get(i, "new") for i in (change.record_id, change.successor_id))
        echo(f"{verb} {old} superseded by {new} (the source replaced it since).")
    for note in report.notes:
        echo(style(f"Note: {note}", fg="yellow"))
    if report.dry_run:
        echo("Dry run: nothing was written.")


COMMANDS = [import_group]
