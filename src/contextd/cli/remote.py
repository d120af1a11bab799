"""remote add/list/remove/scan/pull/push over the system ssh, and `sync conflicts`."""

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from contextd.cli._context import common_options, get_app, option_bundle
from contextd.cli._groups import SuggestingGroup
from contextd.cli._output import emit, table, warn
from contextd.cli.bundles import print_merge
from contextd.cli.survey import print_summary
from contextd.clock import age
from contextd.sync.remotes import expansion_warnings, remote_view
from contextd.sync.ssh import RemoteSpec
from contextd.text.printer import echo, style

__all__ = ["COMMANDS", "conflicts"]

F = TypeVar("F", bound=Callable[..., Any])

_how = option_bundle(
    click.option("--login-shell", is_flag=True, help="Run contextd in a login shell there."),
    click.option("--command", metavar="PATH", help="contextd's path there ('~/…' quoted)."),
    click.option("--remote-home", metavar="DIR", help="The store there (default: its own)."),
    click.option(
        "--ssh-option",
        "ssh_options",
        multiple=True,
        metavar="OPT",
        help="An argument for ssh (repeatable), e.g. --ssh-option=-p --ssh-option=2222.",
    ),
)
_mode = click.option(
    "--batch/--interactive",
    default=None,
    help="Never let ssh prompt / let it prompt (default: prompt only from a terminal).",
)


def _batch(choice: bool | None) -> bool:
    return not sys.stdin.isatty() if choice is None else choice


@click.group(cls=SuggestingGroup)
@common_options
def remote() -> None:
    """Other machines reached over the system ssh: survey, pull from, push to."""


@remote.command(name="add")
@click.argument("name")
@click.argument("target", metavar="[USER@]HOST")
@_how
@common_options
def add(
    name: str,
    target: str,
    login_shell: bool,
    command: str | None,
    remote_home: str | None,
    ssh_options: tuple[str, ...],
) -> None:
    """Name another machine's contextd account (a Host alias from ~/.ssh/config works)."""
    spec = RemoteSpec(target, login_shell, command, remote_home, ssh_options)
    added = get_app().remotes.add(name, spec)
    warnings = expansion_warnings(spec)
    for note in warnings:
        warn(note)
    emit(
        {"remote": remote_view(added), "warnings": warnings},
        lambda: echo(
            f"Added remote {name} → {target}. Next: `contextd remote scan {name}` or "
            f"`contextd remote pull {name}`."
        ),
    )


@remote.command(name="list")
@common_options
def list_remotes() -> None:
    """Configured remotes, with when each was last pulled from and pushed to."""
    remotes = get_app().remotes.list()

    def human() -> None:
        if not remotes:
            echo("No remotes yet; add one with `contextd remote add NAME [user@]host`.")
            return
        rows = [["name", "target", "last pull", "last push", "options"]]
        for r in remotes:
            options = " ".join(
                x
                for x in (
                    "--login-shell" if r.login_shell else "",
                    f"--command {r.command}" if r.command else "",
                    f"--remote-home {r.remote_home}" if r.remote_home else "",
                    *r.ssh_options,
                )
                if x
            )
            rows.append(
                [
                    r.name,
                    r.target,
                    age(r.last_pull_at) if r.last_pull_at else "never",
                    age(r.last_push_at) if r.last_push_at else "never",
                    options,
                ]
            )
        table(rows, clip_column=None)

    emit({"remotes": [remote_view(r) for r in remotes]}, human)


@remote.command(name="remove")
@click.argument("name")
@common_options
def remove(name: str) -> None:
    """Forget a remote (nothing on either machine is deleted)."""
    removed = get_app().remotes.remove(name)
    emit({"removed": remote_view(removed)}, lambda: echo(f"Removed remote {name}."))


@remote.command()
@click.argument("target", metavar="NAME|[USER@]HOST")
@click.option(
    "--detail", is_flag=True, help="Add each project's kinds by status and memory categories."
)
@_how
@_mode
@common_options
def scan(
    target: str,
    detail: bool,
    login_shell: bool,
    command: str | None,
    remote_home: str | None,
    ssh_options: tuple[str, ...],
    batch: bool | None,
) -> None:
    """Count what another account holds (nothing is copied); works before `remote add`."""
    app = get_app()
    given = RemoteSpec(target, login_shell, command, remote_home, ssh_options)
    customised = given != RemoteSpec(target)
    name, spec, configured = app.remotes.resolve(target, given if customised else None)
    for note in expansion_warnings(spec):
        warn(note)
    found = app.remotes.scan(spec, batch=_batch(batch), detail=detail)

    def human() -> None:
        print_summary(found, spec.target, detail=detail)
        if configured:
            echo(f"Nothing was copied. `contextd remote pull {name}` merges it here.")
        else:
            echo(
                f"Nothing was copied. `contextd remote add NAME {spec.target}` (same options), "
                "then `contextd remote pull NAME`, merges it here."
            )

    emit({"remote": name if configured else None, "target": spec.target, "summary": found}, human)


@remote.command()
@click.argument("name")
@click.option("--dry-run", is_flag=True, help="Report what would change here; write nothing.")
@_mode
@common_options
def pull(name: str, dry_run: bool, batch: bool | None) -> None:
    """Bring the other machine's records here, merged by record id."""
    app = get_app()
    report = app.remotes.pull(name, dry_run=dry_run, batch=_batch(batch))
    view = report.view(app.sync.store_id()) | {"remote": name}
    emit(view, lambda: print_merge(view, f"Pulled from {name}"))


@remote.command()
@click.argument("name")
@click.option("--dry-run", is_flag=True, help="Report what would change there; write nothing.")
@_mode
@common_options
def push(name: str, dry_run: bool, batch: bool | None) -> None:
    """Send this machine's records there; they are merged on that side by the same rules."""
    pushed = get_app().remotes.push(name, dry_run=dry_run, batch=_batch(batch))
    view = pushed.result | {"remote": name}
    emit(view, lambda: print_merge(view, f"Pushed to {name}"))


@click.command()
@common_options
def conflicts() -> None:
    """Records both machines changed since they last exchanged (the local copy was kept)."""
    app = get_app()
    found = app.sync.conflicts()
    shorts = app.reader.handles([c.local.id for c in found])
    payload = {
        "conflicts": [
            {
                "id": c.local.id,
                "title": c.local.title,
                "peer": c.peer,
                "local_updated_at": c.local.updated_at,
                "remote_updated_at": c.remote.get("updated_at"),
                "differing": c.differing,
                "detected_at": c.detected_at,
                "remote": c.remote,
            }
            for c in found
        ]
    }

    def human() -> None:
        if not found:
            echo("No divergences: every exchanged record agrees with its other copies.")
            return
        for c in found:
            echo(f"{style(shorts.get(c.local.id, c.local.id), bold=True)}  {c.local.title}")
            echo(
                f"  here: changed {c.local.updated_at}; {c.peer}: changed "
                f"{c.remote.get('updated_at')}; differs in {', '.join(c.differing) or 'dates'}"
            )
            if c.remote.get("title") != c.local.title:
                echo(f"  {c.peer}'s title: {c.remote.get('title')}")
        echo(
            "The local copies were kept. Settle one with `contextd sync resolve ID --keep "
            "local` (then push) or `--keep theirs`."
        )

    emit(payload, human)


@click.command()
@click.argument("record_id", metavar="ID")
@click.option(
    "--keep",
    type=click.Choice(["local", "theirs"]),
    required=True,
    help="local: this copy wins everywhere on the next exchange; theirs: take the other copy.",
)
@common_options
def resolve(record_id: str, keep: str) -> None:
    """Settle a divergence listed by `sync conflicts`."""
    app = get_app()
    record = app.sync.resolve(app.reader.get(record_id).id, keep_local=keep == "local")
    emit(
        {"id": record.id, "kept": keep, "updated_at": record.updated_at},
        lambda: echo(
            f"Settled {record.id}: kept {'this copy' if keep == 'local' else 'their copy'}"
            f"{'; push it so the other side follows' if keep == 'local' else ''}."
        ),
    )


COMMANDS = [remote]
