"""`contextd serve`: the MCP server over Streamable HTTP, with a bearer token per developer."""

import json
import logging
import sys
from pathlib import Path

import click

from contextd.app import can_write_store
from contextd.cli._context import common_options, get_app, get_settings, state
from contextd.errors import InvalidInputError, StoreError
from contextd.text.printer import echo

__all__ = ["COMMANDS"]

PLAIN_HTTP_NOTE = (
    "Note: {host} is reachable beyond this machine over plain HTTP: tokens would cross the "
    "network readable. Put TLS in front (a reverse proxy such as nginx or Caddy; see "
    "docs/team-http.md), or give --tls-cert and --tls-key."
)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="Port."
)
@click.option("--read-only", is_flag=True, help="Only the tools that change nothing, for all.")
@click.option(
    "--tls-cert",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Certificate (PEM) to serve HTTPS with.",
)
@click.option(
    "--tls-key", type=click.Path(dir_okay=False, path_type=Path), help="Its private key (PEM)."
)
@common_options
def serve(
    host: str, port: int, read_only: bool, tls_cert: Path | None, tls_key: Path | None
) -> None:
    """Serve the MCP tools over Streamable HTTP at /mcp, on the configured store (this
    home's, or the team server). Every request needs a token from `contextd token create`.
    Serves until Ctrl-C."""
    from contextd.http.server import Listening, is_loopback
    from contextd.http.server import serve as run

    if (tls_cert is None) != (tls_key is None):
        raise InvalidInputError("Give both --tls-cert and --tls-key, or neither.")
    settings = get_settings()
    if not can_write_store(settings):
        raise StoreError(
            f"The store in {settings.home} cannot be written; `contextd serve` counts each "
            "token's requests there, so it needs a store it can write."
        )
    tls = (tls_cert, tls_key) if tls_cert is not None and tls_key is not None else None
    if not is_loopback(host) and tls is None:
        echo(PLAIN_HTTP_NOTE.format(host=host), err=True)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    app = get_app()

    def announce(where: Listening) -> None:
        app.index.warm_in_background()  # once listening: a refused address closes the app
        mode = "read-only" if read_only else "read-write"
        if state().json:
            echo(json.dumps({"url": where.url, "port": where.port, "read_only": read_only}))
        else:
            echo(f"contextd serve ({mode}) at {where.url} on {settings.store_location}")
            echo("Each request needs `Authorization: Bearer <token>`; Ctrl-C stops.")
        sys.stdout.flush()

    try:
        run(app, host=host, port=port, read_only=read_only, tls=tls, announce=announce)
    except KeyboardInterrupt:
        echo("Stopped.", err=True)


COMMANDS = [serve]
