"""init, attach and detach: setting up the store and linking project folders to it."""

import sys
from pathlib import Path
from typing import Any

import click

from contextd.agents.importer import ImportOutcome
from contextd.cli._context import common_options, get_app, get_settings
from contextd.cli._output import emit
from contextd.client.grammar import counted
from contextd.client.printer import echo, style
from contextd.core.reading.views import project_view
from contextd.core.workspace.home import initialise_home
from contextd.errors import InvalidInputError

__all__ = ["COMMANDS"]


@click.command()
@common_options
def init() -> None:
    """Create the store folder, its config.toml and database (safe to run again).

    \b
    Examples:
      contextd init
      contextd init --home ~/work/.contextd
    """
    get_app()  # creates the home (private) and the database, or tightens and migrates them
    outcome = initialise_home(get_settings())
    payload = {
        "home": str(outcome.home),
        "config": str(outcome.config_path),
        "database": outcome.store_location,
        "created_config": outcome.wrote_config,
    }

    def human() -> None:
        echo(f"contextd home  {outcome.home}")
        note = "written" if outcome.wrote_config else "kept as it was"
        echo(f"config         {outcome.config_path} ({note})")
        echo(f"database       {outcome.store_location}")
        echo("Next: run `contextd attach` inside a project folder.")

    emit(payload, human)


@click.command()
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--name", help="Display name (default: the folder's name).")
@click.option(
    "--no-import", is_flag=True, help="Do not import the notes of CLAUDE.md, AGENTS.md and such."
)
@common_options
def attach(path: Path | None, name: str | None, no_import: bool) -> None:
    """Link a project folder (its git root) to contextd; adopts a project with the same remote.

    Notes already written in the folder's agent files (CLAUDE.md, AGENTS.md, GEMINI.md,
    .cursor/rules/*.mdc, .cursorrules, .windsurfrules) are imported as records, once.

    \b
    Examples:
      contextd attach                       # the folder you are in
      contextd attach ~/src/orbit --name orbit --no-import
    """
    app = get_app()
    outcome = app.projects.attach((path or Path.cwd()).absolute(), name)
    imported = None
    if not no_import:
        # A teammate's clone: what `.contextd/` holds is in the store before the notes are
        # compared with it, so the notes it already shares are not imported again.
        seen = app.project(None, Path(outcome.path))
        app.shares.take_in(seen, app.vectors_wanted)
        imported = app.agent_files.import_existing(seen, Path(outcome.path))
    payload = {
        "action": outcome.action,
        "path": outcome.path,
        "project": project_view(outcome.project),
        "imported": _import_view(imported),
    }

    def human() -> None:
        project = outcome.project
        verb = {
            "created": "Attached new project",
            "adopted": "Adopted existing project",
            "already attached": "Already attached:",
        }[outcome.action]
        echo(f"{verb} {style(project.name, bold=True)} ({project.slug}) at {outcome.path}")
        if project.git_remote:
            echo(f"git remote  {project.git_remote}")
        if imported and imported.files:
            echo(
                f"Imported {counted(imported.imported, 'note')} from {', '.join(imported.files)}"
                f" ({imported.duplicates} already stored, {imported.refused} refused)."
            )

    emit(payload, human)


def _import_view(outcome: ImportOutcome | None) -> dict[str, Any] | None:
    if outcome is None:
        return None
    return {
        "files": outcome.files,
        "records": outcome.imported,
        "duplicates": outcome.duplicates,
        "refused": outcome.refused,
    }


@click.command()
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--all", "every", is_flag=True, help="Unlink every folder of the project.")
@click.option(
    "--purge",
    is_flag=True,
    help="Also delete the project and all its records on this machine (not synced).",
)
@click.option("--yes", is_flag=True, help="Do not ask before --purge.")
@common_options
def detach(path: Path | None, every: bool, purge: bool, yes: bool) -> None:
    """Unlink a folder (default: the one you are in) from its project; the records stay
    unless --purge."""
    if path is not None and every:
        raise InvalidInputError("Give a folder or --all, not both.")
    app = get_app()
    folder = (path or Path.cwd()).absolute()
    project = app.projects.resolve(app.settings.project, folder) if path else app.current_project()
    if purge and not yes:
        if not sys.stdin.isatty():
            raise InvalidInputError("--purge deletes the project's records; add --yes to confirm.")
        if not click.confirm(
            f"Delete project {project.name} and all its records on this machine?",
            default=False,
            err=True,
        ):
            raise click.Abort()
    outcome = app.projects.detach(project, folder, purge=purge, every=every)
    payload = {
        "project": project_view(project),
        "detached_path": outcome.path,
        "detached_paths": list(outcome.unlinked),
        "purged": purge,
        "records_deleted": outcome.purged_records or 0,
    }

    def human() -> None:
        if purge:
            echo(
                f"Purged project {project.name}: "
                f"{counted(outcome.purged_records or 0, 'record')} deleted on this machine."
            )
        else:
            echo(
                f"Detached {project.name} from {', '.join(outcome.unlinked)}; its records are "
                "kept (`contextd attach` links it again)."
            )

    emit(payload, human)


COMMANDS = [init, attach, detach]
