"""MCP sessions the daemon hosts for `contextd mcp serve` relays: the server the relay would
have run in-process, over the daemon's warm App, in the place the relay named, spoken on the
relay's connection by the same (repaired) stdio transport.

The server is built once per --read-only choice (registering the tools costs ~0.1 s) and run
once per connection, as the SDK's HTTP transport runs one server for many sessions: its
lifespan makes each run a Connection of its own, in the place that run's thread set.

Imported by the daemon when the first session arrives (contextd.daemon.hosting).
"""

import socket
import threading
from contextvars import ContextVar
from pathlib import Path
from typing import BinaryIO, cast

from mcp.server import MCPServer

from contextd.app import App
from contextd.mcp.connection import Connection
from contextd.mcp.project import ServerPlace
from contextd.mcp.server import build_server
from contextd.mcp.transport import run_stdio

__all__ = ["Host"]

# The place of the session this thread serves: each session runs on a thread of its own,
# and its event loop starts in a copy of that thread's context.
_PLACE: ContextVar[ServerPlace] = ContextVar("contextd_mcp_place")


class Host:
    """Serves the MCP sessions of one App."""

    def __init__(self, app: App) -> None:
        self._app = app
        self._servers: dict[bool, MCPServer[Connection]] = {}
        self._building = threading.Lock()

    def serve(
        self,
        conn: socket.socket,
        folder: str,
        project: str | None,
        agent_dirs: tuple[str, ...],
        read_only: bool,
    ) -> None:
        """Serve one MCP session on `conn` until either side closes it; the contextd session
        it opened ends with it."""
        server = self._server(read_only)
        _PLACE.set(ServerPlace(Path(folder), project, agent_dirs))
        reading = cast(BinaryIO, conn.makefile("rb"))
        writing = cast(BinaryIO, conn.makefile("wb"))
        try:
            run_stdio(server, (reading, writing))
        finally:
            reading.close()
            writing.close()

    def _server(self, read_only: bool) -> MCPServer[Connection]:
        with self._building:
            if read_only not in self._servers:
                self._servers[read_only] = build_server(
                    self._app, read_only=read_only, where=_PLACE.get
                )
            return self._servers[read_only]
