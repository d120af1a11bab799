"""An MCP session the daemon hosts for a `contextd mcp serve` relay: the server the relay
would have run in-process, over the daemon's warm App, in the place the relay named, spoken
on the relay's connection by the same (repaired) stdio transport.

Imported by `contextd daemon run` on a thread once the daemon listens (the SDK costs ~0.7 s),
never by the daemon package itself (see contextd.daemon.hosting).
"""

import socket
from pathlib import Path
from typing import BinaryIO, cast

from contextd.app import App
from contextd.mcp.project import ServerPlace
from contextd.mcp.server import build_server
from contextd.mcp.transport import run_stdio

__all__ = ["host"]


def host(
    app: App,
    conn: socket.socket,
    folder: str,
    project: str | None,
    agent_dirs: tuple[str, ...],
    read_only: bool,
) -> None:
    """Serve one MCP session on `conn` until either side closes it; the contextd session it
    opened ends with it."""
    where = ServerPlace(Path(folder), project, agent_dirs)
    server = build_server(app, read_only=read_only, where=where)
    reading = cast(BinaryIO, conn.makefile("rb"))
    writing = cast(BinaryIO, conn.makefile("wb"))
    try:
        run_stdio(server, (reading, writing))
    finally:
        reading.close()
        writing.close()
