"""sync: the Markdown mirror of the store, regenerated, and hand edits adopted as records."""

from collections.abc import Callable
from typing import Any

import click

from contextd.app import App
from contextd.cli._context import common_options, get_app, state
from contextd.cli._groups import SuggestingGroup
from contextd.cli._output import confirm, emit
from contextd.cli.remote import conflicts, resolve
from contextd.errors import ConflictError, InvalidInputError
from contextd.mirror.adopt import Change
from contextd.mirror.service import AdoptPlan, SyncReport
from contextd.models import Project
from contextd.text.printer import echo

__all__ = ["COMMANDS"]


@click.group(invoke_without_command=True, cls=SuggestingGroup)
@click.option("--adopt", is_flag=True, help="Turn hand edits of the mirror into records.")
@click.option("--force", is_flag=True, help="Overwrite hand-edited mirror files (edits are lost).")
@click.option("--yes", is_flag=True, help="Adopt without asking.")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@common_options
@click.pass_context
def sync(ctx: click.Context, adopt: bool, force: bool, yes: bool, dry_run: bool) -> None:
    """Regenerate the Markdown mirror ($CONTEXTD_HOME/projects/<slug>/ and global/) from the
    store; with --project (or $CONTEXTD_PROJECT), only that project's folder and global/. A
    file edited by hand is left alone until you adopt (--adopt) or drop (--force) the edits.
    `sync conflicts` / `sync resolve` settle records changed on two machines."""
    if ctx.invoked_subcommand is not None:
        return
    if adopt and force:
        raise InvalidInputError("Use --adopt to keep hand edits or --force to drop them, not both.")
    app = get_app()
    name = app.settings.project
    project = app.projects.resolve(name, app.settings.cwd) if name else None
    if adopt:
        _adopt(app, project, yes=yes, dry_run=dry_run)
    else:
        _regenerate(app, project, force=force, dry_run=dry_run)


def _regenerate(app: App, project: Project | None, *, force: bool, dry_run: bool) -> None:
    report = app.mirror.sync(force=force, dry_run=dry_run, project=project)
    if report.edited and not dry_run:
        raise ConflictError(
            f"Regenerated the mirror in {app.mirror.root} but left {len(report.edited)} "
            f"hand-edited file(s) as they are ({', '.join(report.edited)}): run "
            "`contextd sync --adopt` to turn the edits into records, or `contextd sync --force` "
            "to overwrite them."
        )

    def human() -> None:
        would = "Would write" if dry_run else "Wrote"
        echo(
            f"{would} {len(report.written)} file(s), removed {len(report.removed)}, "
            f"{report.unchanged} unchanged, in {app.mirror.root}."
        )
        for path in report.written:
            echo(f"  wrote    {path}")
        for path in report.removed:
            echo(f"  removed  {path}")
        for path in report.edited:
            echo(f"  edited by hand, would be left alone: {path}")

    emit(_report_view(report, app) | {"dry_run": dry_run}, human)


def _adopt(app: App, project: Project | None, *, yes: bool, dry_run: bool) -> None:
    plan = app.mirror.plan(project)
    if not plan.folders:
        _regenerate(app, project, force=False, dry_run=dry_run)
        return
    if dry_run:
        emit({"changes": [_change_view(c) for c in plan.changes], "applied": False}, _plan(plan))
        return
    if not yes:
        if not state().json:
            _plan(plan)()
        _confirm(plan)
    applied, report = app.mirror.adopt(plan)

    def human() -> None:
        if yes:
            _plan(plan)()
        echo(
            f"Adopted {len(applied)} change(s); regenerated {len(report.written)} file(s) in "
            f"{app.mirror.root}."
        )

    payload = {"changes": [_change_view(c) for c in plan.changes], "applied": True}
    emit(payload | _report_view(report, app), human)


def _confirm(plan: AdoptPlan) -> None:
    question = (
        f"Apply these {len(plan.changes)} change(s) and regenerate the edited files?"
        if plan.changes
        else "The edits change no record; regenerate the edited files (dropping the edits)?"
    )
    confirm(
        question,
        without_terminal="Adopting changes records; add --yes to confirm, or --dry-run to only "
        "see the plan.",
    )


def _plan(plan: AdoptPlan) -> Callable[[], None]:
    def human() -> None:
        if not plan.changes:
            echo("The hand edits change no record.")
        for change in plan.changes:
            where = f"{change.folder}/{change.file}"
            what = f" ({', '.join(change.fields)})" if change.fields else ""
            echo(f"  {change.action:<8} {_clip(change.title)!r}{what}  [{where}]")

    return human


def _change_view(change: Change) -> dict[str, Any]:
    return {
        "action": change.action,
        "folder": change.folder,
        "file": change.file,
        "title": change.title,
        "id": change.record_id,
        "fields": list(change.fields),
    }


def _report_view(report: SyncReport, app: App) -> dict[str, Any]:
    return {
        "root": str(app.mirror.root),
        "written": report.written,
        "removed": report.removed,
        "edited": report.edited,
        "unchanged": report.unchanged,
    }


def _clip(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


sync.add_command(conflicts)
sync.add_command(resolve)

COMMANDS = [sync]
