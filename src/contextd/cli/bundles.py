"""bundle export/import/summary: moving records between machines through a JSON file."""

import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import click

from contextd.app import can_write_store
from contextd.cli._context import common_options, get_app, get_settings, state
from contextd.cli._groups import SuggestingGroup
from contextd.cli._output import emit
from contextd.cli._progress import progress_bar
from contextd.cli.survey import print_summary
from contextd.clock import parse_when, to_iso
from contextd.core.workspace.capped import Cap, read_capped, read_stream_capped
from contextd.errors import InvalidInputError
from contextd.sync.bundle import bundle_cap, dump_bundle
from contextd.sync.summary import store_summary
from contextd.text.grammar import counted
from contextd.text.printer import echo, style

__all__ = ["COMMANDS", "print_merge"]


@click.group(cls=SuggestingGroup)
@common_options
def bundle() -> None:
    """Exchange records with another machine through a JSON file (no SSH needed)."""


@bundle.command(name="export")
@click.option("--out", required=True, metavar="FILE", help="Where to write it ('-': stdout).")
@click.option(
    "--since",
    metavar="DATE",
    help="Only records changed and deletions made since DATE (2026-01-31, ISO, or 30d).",
)
@common_options
def export_bundle(out: str, since: str | None) -> None:
    """Write every project's records, supersede links and deletions (or --project's) to FILE.

    A store that cannot be written (a read-only home) is exported without remembering what
    was sent, which only conflict detection uses.

    \b
    Examples:
      contextd bundle export --out laptop.json
      contextd bundle export --out - --since 30d | ssh desk contextd bundle import --file -
    """
    remember = can_write_store(get_settings())
    app = get_app(read_only=not remember)
    chosen = state().project
    project = app.projects.resolve(chosen, app.settings.cwd) if chosen else None
    bundle_ = app.sync.export(project, _since(since), remember=remember)
    if not remember:
        echo(_NOT_REMEMBERED.format(home=app.settings.home), err=True)
    text = dump_bundle(bundle_)
    if out == "-":
        echo(text)
        return
    _write(Path(out), text)
    payload = {
        "file": out,
        "projects": len(bundle_.projects),
        "records": len(bundle_.records),
        "tombstones": len(bundle_.tombstones),
        "remembered": remember,
    }
    emit(
        payload,
        lambda: echo(
            f"Exported {counted(len(bundle_.records), 'record')} and "
            f"{counted(len(bundle_.tombstones), 'deletion')} "
            f"of {counted(len(bundle_.projects), 'project')} to {out}."
        ),
    )


_NOT_REMEMBERED = (
    "Note: {home} is read-only, so this export was not remembered: if both machines later "
    "change the same record, the newer change wins instead of being listed by "
    "`contextd sync conflicts`."
)


_BAR_FROM = 50  # new records; each is embedded, so a big bundle takes a while


@bundle.command(name="import")
@click.option("--file", "file_", required=True, metavar="FILE", help="The bundle ('-': stdin).")
@click.option("--dry-run", is_flag=True, help="Report what would change; write nothing.")
@common_options
def import_bundle(file_: str, dry_run: bool) -> None:
    """Merge a bundle by record id: newer versions win, divergences are listed, deletions
    travel.

    \b
    Examples:
      contextd bundle import --file laptop.json --dry-run
      contextd bundle import --file laptop.json
    """
    app = get_app()
    source = "the bundle on stdin" if file_ == "-" else file_
    text = _read(file_, bundle_cap(app.settings.sync.max_bundle_mb))
    with progress_bar("embedding", at_least=_BAR_FROM) as bar:
        report = app.sync.import_text(text, source, dry_run=dry_run, progress=bar.update)
    view = report.view(app.sync.store_id())
    emit(view, lambda: print_merge(view, f"Merged {source}"))


@bundle.command()
@click.option("--detail", is_flag=True, help="Add each project's kinds by status and categories.")
@common_options
def summary(detail: bool) -> None:
    """Counts of what this store holds, per project and kind (what `remote scan` reads)."""
    app = get_app()
    payload = store_summary(app.db, app.inventory(), detail=detail)
    emit(payload, lambda: print_summary(payload, "this store", detail=detail))


def print_merge(view: dict[str, Any], headline: str) -> None:
    """One line of counts, and where to look when something diverged."""
    parts = [
        f"{view['added']} added",
        f"{view['updated']} updated",
        f"{view['unchanged']} unchanged",
        f"{view['deleted']} deleted",
        counted(view["conflicts"], "conflict"),
    ]
    if view.get("kept_local"):
        parts.append(f"{view['kept_local']} newer here (kept)")
    echo(f"{headline}: {', '.join(parts)}.")
    if view.get("projects_created"):
        echo(
            f"New projects without a folder: {', '.join(view['projects_created'])} "
            "(`contextd attach` in a checkout adopts one)."
        )
    if view.get("groups_created"):
        echo(f"New project groups: {', '.join(view['groups_created'])} (`contextd group list`).")
    if view.get("members_changed"):
        echo(f"Group memberships changed: {view['members_changed']}.")
    if view.get("dry_run"):
        echo("Dry run: nothing was written.")
    elif view.get("conflicts"):
        echo(
            style(
                "Both sides changed some records; the local copies were kept. "
                "See `contextd sync conflicts`.",
                fg="yellow",
            )
        )


def _since(text: str | None) -> str | None:
    if text is None:
        return None
    moment = parse_when(text)
    if moment is None:
        raise InvalidInputError(
            f"--since {text!r} is not a date; use 2026-01-31, an ISO instant or a span like 30d."
        )
    return to_iso(moment)


def _read(name: str, cap: Cap) -> str:
    data: bytes
    try:
        if name == "-":
            data = read_stream_capped(sys.stdin.buffer, cap, "The bundle on stdin")
        else:
            data = read_capped(Path(name), cap)
    except FileNotFoundError:
        raise InvalidInputError(f"No bundle at {name}; check the path.") from None
    except OSError as exc:
        raise InvalidInputError(f"Cannot read {name}: {exc.strerror}.") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError(
            f"{name} is not UTF-8 text, so not a contextd bundle; give a file written by "
            "`contextd bundle export`."
        ) from None


def _write(path: Path, text: str) -> None:
    """Write via a temporary file beside it, so a failed write leaves no half bundle."""
    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(prefix=".bundle-", dir=path.parent.absolute())
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except OSError as exc:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        raise InvalidInputError(f"Cannot write {path}: {exc.strerror}.") from None


COMMANDS = [bundle]
