"""token create/list/revoke: the bearer tokens `contextd serve` admits, one per developer."""

from typing import Any

import click

from contextd.cli._context import common_options, get_app, state
from contextd.cli._groups import SuggestingGroup
from contextd.cli._output import emit, table
from contextd.clock import now
from contextd.core.workspace.tokens import TokenRow
from contextd.text.printer import echo, style

__all__ = ["COMMANDS"]


def _view(row: TokenRow) -> dict[str, Any]:
    stamp = now()
    state = "revoked" if row.revoked_at else "active"
    if state == "active" and row.expires_at is not None and row.expires_at <= stamp:
        state = "expired"
    return {
        "name": row.name,
        "developer": row.developer,
        "read_only": row.read_only,
        "project": row.project,
        "created_at": row.created_at,
        "expires_at": row.expires_at,
        "revoked_at": row.revoked_at,
        "used_at": row.used_at,
        "state": state,
    }


@click.group(cls=SuggestingGroup)
@common_options
def token() -> None:
    """Bearer tokens for `contextd serve`: one per developer, named after them."""


@token.command()
@click.argument("name")
@click.option("--read-only", is_flag=True, help="Only the tools that change nothing.")
@click.option(
    "--expires",
    default="90d",
    show_default=True,
    metavar="SPAN",
    help="How long it is valid: 90d, 12h, 2w, or never.",
)
@click.option(
    "--developer",
    metavar="WHO",
    help="Whom it acts for (default: NAME): tokens of one developer, one per machine, see the "
    "same personal records.",
)
@common_options
def create(name: str, read_only: bool, expires: str, developer: str | None) -> None:
    """Make a token NAME for developer NAME (or --developer) and print it, once (the store
    keeps only a hash). With --project, calls that name no project work on that one.

    \b
    Examples:
      contextd token create alice --project orbit
      contextd token create alice-laptop --developer alice --expires 30d
    """
    app = get_app()
    project = state().project  # this command's own --project, not $CONTEXTD_PROJECT
    slug = None if project is None else app.project(project, app.settings.cwd).slug
    issued = app.tokens.create(
        name, read_only=read_only, project=slug, expires=expires, developer=developer
    )

    def human() -> None:
        echo(issued.token)
        mode = "read-only" if read_only else "read-write"
        until = issued.row.expires_at[:10] if issued.row.expires_at else "never expires"
        where = f", project {slug}" if slug else ""
        echo(
            style(
                f"Token for {issued.row.developer} ({mode}{where}; until {until}). It is shown "
                "only now: give it to the developer, who sends it as "
                "`Authorization: Bearer <token>`.",
                fg="bright_black",
            ),
            err=True,
        )

    emit({"token": issued.token, **_view(issued.row)}, human)


@token.command(name="list")
@common_options
def list_() -> None:
    """The tokens, with whom each acts for and whether it still admits anyone."""
    rows = [_view(r) for r in get_app().tokens.list_tokens()]

    def human() -> None:
        if not rows:
            echo("No tokens yet; `contextd token create NAME` makes one.")
            return
        lines = [["NAME", "DEVELOPER", "STATE", "MODE", "PROJECT", "EXPIRES", "LAST USED"]]
        for r in rows:
            lines.append(
                [
                    r["name"],
                    r["developer"],
                    r["state"],
                    "read-only" if r["read_only"] else "read-write",
                    r["project"] or "",
                    (r["expires_at"] or "never")[:10],
                    (r["used_at"] or "never")[:16].replace("T", " "),
                ]
            )
        table(lines, clip_column=None)

    emit({"tokens": rows}, human)


@token.command()
@click.argument("name")
@common_options
def revoke(name: str) -> None:
    """Revoke the token NAME: every serve process refuses it from its next request."""
    row = get_app().tokens.revoke(name)
    emit({"token": _view(row)}, lambda: echo(f"Revoked the token {name}."))


COMMANDS = [token]
