"""One MCP server per developer and read-only choice, each answering through the SDK's
Streamable HTTP transport in stateless mode: no MCP session lives in a process, so any serve
process on the store answers any request (what a session is, is the store's: the developer's
open session on the project).

A server's tools work for one developer (its App acts for them: sessions, checkpoints and
personal records are theirs); it is built on that developer's first request and kept until
config.toml changes (then built again on the next request with the settings read anew; the old
one finishes what it answers and then idles).
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.abc import TaskGroup, TaskStatus
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from contextd.app import App
from contextd.mcp.server import build_server

__all__ = ["TeamServers"]


class TeamServers:
    """The servers of one process, and the task group their transports run in."""

    def __init__(self, *, read_only: bool, body_bytes: int) -> None:
        self._read_only = read_only  # `serve --read-only`: every caller reads only
        self._body_bytes = body_bytes
        # (developer, read-only) -> the App it was built from, the developer's, its transport
        self._served: dict[tuple[str, bool], tuple[App, App, StreamableHTTPSessionManager]] = {}
        self._lock = anyio.Lock()
        self._group: TaskGroup | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                group.cancel_scope.cancel()
                self._group = None

    async def serving(
        self, core: App, developer: str, read_only: bool
    ) -> tuple[App, StreamableHTTPSessionManager]:
        """The developer's App over `core` (the process's, with the settings in force) and
        the transport of their server: built on first use, and again once `core` is another
        (config.toml changed)."""
        key = (developer, read_only or self._read_only)
        async with self._lock:
            if key not in self._served or self._served[key][0] is not core:
                app = core.acting_for(developer)
                server = await anyio.to_thread.run_sync(lambda: build_server(app, read_only=key[1]))
                manager = StreamableHTTPSessionManager(
                    server._lowlevel_server,  # as the SDK's own streamable_http_app does
                    stateless=True,
                    json_response=True,
                    max_request_body_size=self._body_bytes,
                )
                assert self._group is not None, "TeamServers.running() is not entered"
                await self._group.start(_run, manager)
                self._served[key] = (core, app, manager)
            _, app, manager = self._served[key]
            return app, manager


async def _run(
    manager: StreamableHTTPSessionManager,
    *,
    task_status: TaskStatus[Any] = anyio.TASK_STATUS_IGNORED,
) -> None:
    async with manager.run():
        task_status.started()
        await anyio.sleep_forever()
