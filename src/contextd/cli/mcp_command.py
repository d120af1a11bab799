"""`contextd mcp serve`: the MCP server on stdio."""

import logging
import sys

import click

from contextd.cli._context import common_options, get_app

__all__ = ["COMMANDS"]


@click.group()
def mcp() -> None:
    """The MCP server for agents (Claude Code, Codex, Cursor, ...)."""


@mcp.command()
@click.option("--read-only", is_flag=True, help="Expose only the tools that change nothing.")
@common_options
def serve(read_only: bool) -> None:
    """Speak MCP on stdin/stdout until the client disconnects."""
    # Deferred: the MCP SDK is heavy and only this command needs it.
    from contextd.mcp.server import build_server

    # stdout is the protocol: logs go to stderr only.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    build_server(get_app(), read_only=read_only).run()


COMMANDS = [mcp]
