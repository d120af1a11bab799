"""group create/add/remove/list/show/rename/delete: project groups, whose records apply to
each member."""

from pathlib import Path

import click

from contextd.app import App
from contextd.cli._context import common_options, get_app
from contextd.cli._output import confirm, emit, table
from contextd.core.workspace.groups import GroupDetail, group_view
from contextd.models import Project
from contextd.text.grammar import counted
from contextd.text.printer import echo, style

__all__ = ["COMMANDS"]


@click.group()
@common_options
def group() -> None:
    """Project groups: records written into a group apply to every member project, ranked
    below the project's own and above the global ones."""


@group.command()
@click.argument("name")
@common_options
def create(name: str) -> None:
    """Make a new, empty group."""
    app = get_app()
    made = app.groups.show(app.groups.create(name).id)
    emit(
        {"group": group_view(made)},
        lambda: echo(
            f"Created group {style(made.group.name, bold=True)} ({made.group.slug}). Next: "
            f"`contextd group add {made.group.slug} PROJECT…`."
        ),
    )


@group.command()
@click.argument("name", metavar="GROUP")
@click.argument("projects", nargs=-1, metavar="[PROJECT]...")
@common_options
def add(name: str, projects: tuple[str, ...]) -> None:
    """Make projects (default: the one here) members of GROUP."""
    app = get_app()
    members = _projects(app, projects)
    joined = app.groups.show(app.groups.add(name, members).id)
    slugs = ", ".join(p.slug for p in members)
    emit(
        {"group": group_view(joined), "added": [p.slug for p in members]},
        lambda: echo(f"Added {slugs} to group {joined.group.slug}."),
    )


@group.command()
@click.argument("name", metavar="GROUP")
@click.argument("projects", nargs=-1, metavar="[PROJECT]...")
@common_options
def remove(name: str, projects: tuple[str, ...]) -> None:
    """Take projects (default: the one here) out of GROUP; its records stay in the group."""
    app = get_app()
    members = _projects(app, projects)
    left = app.groups.show(app.groups.remove(name, members).id)
    slugs = ", ".join(p.slug for p in members)
    emit(
        {"group": group_view(left), "removed": [p.slug for p in members]},
        lambda: echo(f"Removed {slugs} from group {left.group.slug}."),
    )


@group.command(name="list")
@common_options
def list_groups() -> None:
    """Every group with its members."""
    found = get_app().groups.list_groups()

    def human() -> None:
        if not found:
            echo("No groups yet; make one with `contextd group create NAME`.")
            return
        rows = [["group", "name", "members"]]
        rows += [
            [d.group.slug, d.group.name, ", ".join(p.slug for p in d.members) or "none"]
            for d in found
        ]
        table(rows, clip_column=None)

    emit({"groups": [group_view(d) for d in found]}, human)


@group.command()
@click.argument("name", metavar="GROUP")
@common_options
def show(name: str) -> None:
    """A group, its members and how many active records it holds."""
    app = get_app()
    detail = app.groups.show(name)
    held = app.groups.record_count(detail.group)
    emit(group_view(detail) | {"active_records": held}, lambda: _print(detail, held))


@group.command()
@click.argument("name", metavar="GROUP")
@click.argument("new_name", metavar="NEW_NAME")
@common_options
def rename(name: str, new_name: str) -> None:
    """Give GROUP a new name (and the slug it makes); its members and records stay."""
    app = get_app()
    before = app.groups.get(name)
    renamed = app.groups.show(app.groups.rename(name, new_name).id)
    emit(
        {"group": group_view(renamed), "renamed_from": before.slug},
        lambda: echo(
            f"Renamed group {before.slug} to {style(renamed.group.name, bold=True)} "
            f"({renamed.group.slug})."
        ),
    )


@group.command()
@click.argument("name", metavar="GROUP")
@click.option(
    "--purge", is_flag=True, help="Also delete the records it holds (on this machine only)."
)
@click.option("--yes", is_flag=True, help="Do not ask before --purge.")
@common_options
def delete(name: str, purge: bool, yes: bool) -> None:
    """Delete GROUP; its members are then in no group. A group holding records is deleted
    only with --purge, which deletes them too."""
    app = get_app()
    if purge and not yes:
        confirm(
            f"Delete group {app.groups.get(name).slug} and all its records on this machine?",
            without_terminal="--purge deletes the group's records; add --yes to confirm.",
        )
    gone = app.groups.delete(name, purge=purge)

    def human() -> None:
        group = gone.detail.group
        said = f"Deleted group {group.slug}"
        if gone.records_deleted:
            said += f" with its {counted(gone.records_deleted, 'record')}"
        if gone.detail.members:
            members = ", ".join(p.slug for p in gone.detail.members)
            said += f"; its members ({members}) are in no group now"
        echo(said + ".")

    emit(
        {"deleted": group_view(gone.detail), "records_deleted": gone.records_deleted},
        human,
    )


def _print(detail: GroupDetail, held: int) -> None:
    group = detail.group
    echo(f"{style(group.name, bold=True)} ({group.slug})  id {group.id}")
    echo(f"active records  {held}")
    if not detail.members:
        echo(f"members         none yet (`contextd group add {group.slug} PROJECT…`)")
        return
    echo("members         " + ", ".join(p.slug for p in detail.members))


def _projects(app: App, names: tuple[str, ...]) -> list[Project]:
    """The projects named, or the one the command is about."""
    if not names:
        return [app.current_project()]
    return [app.projects.resolve(name, Path.cwd()) for name in dict.fromkeys(names)]


COMMANDS = [group]
