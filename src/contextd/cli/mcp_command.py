"""`contextd mcp serve`: the MCP server on stdio."""

import logging
import sys

import click

from contextd.cli._context import common_options, declared_options, get_app
from contextd.cli._groups import SuggestingGroup
from contextd.client.relay import SERVE_OPTIONS

__all__ = ["COMMANDS"]


@click.group(cls=SuggestingGroup)
def mcp() -> None:
    """The MCP server for agents (Claude Code, Codex, Cursor, ...)."""


@mcp.command()
@declared_options(*SERVE_OPTIONS)
@common_options
def serve(read_only: bool) -> None:
    """Speak MCP on stdin/stdout until the client disconnects.

    A running daemon hosts the session when it can (this process then only relays, see
    contextd.client.relay, which answers before click loads); this is the in-process server.
    """
    # Deferred: the MCP SDK is heavy and only this command needs it.
    from contextd.mcp.server import build_server
    from contextd.mcp.transport import run_stdio

    # stdout is the protocol: logs go to stderr only.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    # Opening the store takes a few ms; the model and the vectors load below. (With a daemon
    # running, the relay has it host the session instead: this server runs without one.)
    app = get_app()
    server = build_server(app, read_only=read_only)
    # Started once the server is built: loading the model while the SDK was still importing
    # (~0.7 s of Python, the floor of `initialize`) only slowed that import, both needing the
    # GIL. It now overlaps the handshake and the client's own start, and is mostly done (or
    # waited for) by the first tool call.
    app.index.warm_in_background()
    run_stdio(server)
    # The client went away. A warming thread still inside onnxruntime while Python exits
    # meets the runtime's static destructors, which abort the process ("terminate called
    # without an active exception", exit 134): let it finish first.
    app.index.settle()


COMMANDS = [mcp]
