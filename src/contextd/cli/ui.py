"""`contextd ui`: the local web view, on 127.0.0.1 with a per-launch token."""

import json
import logging
import sys

import click

from contextd.app import can_write_store
from contextd.cli._context import common_options, get_app, get_settings, state
from contextd.errors import StoreError
from contextd.text.printer import echo

__all__ = ["COMMANDS"]


@click.command()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    help="Port on 127.0.0.1 (default: a free one).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open it in the default browser.")
@click.option(
    "--write", is_flag=True, help="Allow verify, archive, supersede and edit (default: read-only)."
)
@common_options
def ui(port: int, open_browser: bool, write: bool) -> None:
    """Browse the store in a web browser: projects, records and their history, sessions,
    quality. Serves until Ctrl-C (or SIGTERM).

    \b
    Examples:
      contextd ui --open                    # a read-only view in your browser
      contextd ui --write --port 8765
    """
    # Deferred: the web stack (Starlette, uvicorn, Jinja2) loads only for this command.
    from contextd.web.access import Access
    from contextd.web.server import serve

    settings = get_settings()
    writable = can_write_store(settings)
    if write and not writable:
        raise StoreError(
            f"The store in {settings.home} cannot be written; run `contextd ui` without --write "
            "to browse it."
        )
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    app = get_app(read_only=not writable)

    def announce(access: Access) -> None:
        # The search box and similar records use the model; warmed once listening, since a
        # port that cannot be had closes the app under the warming thread.
        app.index.warm_in_background()
        mode = "read-write" if write else "read-only"
        if state().json:
            echo(json.dumps({"url": access.url, "port": access.port, "write": write}))
        else:
            echo(f"contextd ui ({mode}) at {access.url}")
            echo("Only this address opens it (the token is new on every launch); Ctrl-C stops.")
        sys.stdout.flush()

    try:
        serve(app, port=port, write=write, open_browser=open_browser, announce=announce)
    except KeyboardInterrupt:  # uvicorn hands Ctrl-C back once it has shut down cleanly
        echo("Stopped.", err=True)


COMMANDS = [ui]
