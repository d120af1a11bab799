"""group create/add/remove/list/show: project groups, whose records apply to each member."""

from pathlib import Path

import click

from contextd.app import App
from contextd.cli._context import common_options, get_app
from contextd.cli._output import emit, table
from contextd.client.printer import echo, style
from contextd.core.workspace.groups import GroupDetail, group_view
from contextd.models import Project

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
