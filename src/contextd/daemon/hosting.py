"""MCP sessions the daemon hosts for `contextd mcp serve` relays, each on a thread of its own.

A session holds its thread for as long as the agent runs, so sessions never take one of the
request pool's workers (hooks and searches must stay answerable), and their number is capped:
beyond it the daemon declines, and the relay serves in-process. The MCP server itself
(contextd.mcp.hosted) is imported when the first session arrives: a daemon that only answers
hooks never pays for the SDK (~0.7 s and ~55 MiB).
"""

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from contextd.service.requests import McpAsk

if TYPE_CHECKING:
    from contextd.app import App
    from contextd.mcp.hosted import Host

__all__ = ["MAX_HOSTED", "Hosting", "McpHost", "McpSessions"]

log = logging.getLogger(__name__)

MAX_HOSTED = 32  # sessions at once; each is a thread, its event loop and its tool threads
_DRAIN_S = 5.0  # how long a stopping daemon waits for its sessions to end their contextd sessions


# Serves one MCP session on the connection, as the request asked, until the relay or the
# daemon closes it.
McpHost = Callable[[socket.socket, McpAsk], None]


class McpSessions:
    """Runs hosted sessions over the daemon's App, with the server the relay would have run."""

    def __init__(self, app: "App") -> None:
        self._app = app
        self._loading = threading.Lock()
        self._host: Host | None = None

    def _loaded(self) -> "Host":
        with self._loading:  # one thread imports the SDK; a session arriving meanwhile waits
            if self._host is None:
                from contextd.mcp.hosted import Host

                # As the in-process server logs: the SDK's per-call lines (a failed tool's
                # message quotes stored text) stay out of daemon.log.
                logging.getLogger("mcp").setLevel(logging.WARNING)
                self._host = Host(self._app)
            return self._host

    def __call__(self, conn: socket.socket, ask: McpAsk) -> None:
        self._loaded().serve(conn, ask.folder, ask.project, ask.project_dirs, ask.read_only)


class Hosting:
    """The hosted sessions: a slot is reserved before the ok reply, the session then runs on
    its own thread; when the daemon stops, every session's connection is shut, so each ends
    its contextd session and its relay carries on without this daemon."""

    def __init__(self, host: McpHost, limit: int = MAX_HOSTED) -> None:
        self._host = host
        self._slots = threading.BoundedSemaphore(limit)
        self._lock = threading.Lock()
        self._live: dict[socket.socket, threading.Thread] = {}
        self._closed = False

    def reserve(self) -> bool:
        """Take a slot for one session; False when all are taken or the daemon stops."""
        if self._closed:
            return False
        return self._slots.acquire(blocking=False)

    def busy(self) -> bool:
        """Whether a session is live (a daemon hosting one is not idle)."""
        with self._lock:
            return bool(self._live)

    def release(self) -> None:
        """Give back a slot reserved for a session that will not run."""
        self._slots.release()

    def start(self, conn: socket.socket, ask: McpAsk) -> None:
        """Run the session `ask` asked for on `conn` (which it now owns), in its reserved slot."""
        thread = threading.Thread(
            target=self._run, args=(conn, ask), name="contextd-mcp-session", daemon=True
        )
        with self._lock:
            closed = self._closed
            if not closed:
                self._live[conn] = thread
        if not closed:
            try:
                thread.start()
                return
            except RuntimeError:  # no thread to be had: the relay serves in-process
                log.warning("cannot start a thread for a hosted MCP session")
                with self._lock:
                    self._live.pop(conn, None)
        conn.close()
        self._slots.release()

    def _run(self, conn: socket.socket, ask: McpAsk) -> None:
        try:
            conn.settimeout(None)
            self._host(conn, ask)
        except Exception as exc:  # one session's failure must not reach the daemon
            log.warning("a hosted MCP session failed: %s", type(exc).__name__)
            log.debug("the failure", exc_info=True)
        finally:
            with self._lock:
                self._live.pop(conn, None)
            conn.close()
            self._slots.release()

    def stop(self) -> None:
        """End every session: their relays see the connection close, and go on without this
        daemon (another one, or an in-process server)."""
        with self._lock:
            self._closed = True
            live = list(self._live.items())
        for conn, _thread in live:
            with contextlib.suppress(OSError):  # closed already
                conn.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + _DRAIN_S
        for _conn, thread in live:
            thread.join(max(0.0, deadline - time.monotonic()))
        if any(thread.is_alive() for _conn, thread in live):
            log.warning("some hosted MCP sessions did not end within %.0f s", _DRAIN_S)
