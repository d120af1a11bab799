"""The daemon: one process that keeps the store, the model and the vector matrix warm and
answers typed requests on a Unix socket only its user can reach, several at a time.

It reads the store through the same App as any command, so writes made by other processes
(the CLI, the MCP server) are seen: the vector matrix reloads when the database changes.
Requests are read off their connections by the accept loop (contextd.daemon.intake), and
each one that arrived whole is answered on a worker thread; the store gives each thread its
own SQLite connection, and nothing process-wide (environment, folder, streams) changes per
request.
"""

import fcntl
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from contextd.app import App
from contextd.daemon.handlers import Handlers
from contextd.daemon.hosting import Hosting, McpSessions
from contextd.daemon.intake import Arrived, Intake
from contextd.daemon.lifetime import Lifetime
from contextd.daemon.pulling import ScheduledPull
from contextd.home_folder import PRIVATE_FILE, open_private
from contextd.wire import frames, rendezvous
from contextd.wire.launch import LOCK_FILE

__all__ = ["serve"]

log = logging.getLogger(__name__)

WORKERS = 8  # requests answered at once; more wait, read whole, for a free worker
_ACCEPT_TICK_S = 0.5  # how often the loop looks at the stop flag
_SEND_TIMEOUT_S = 5.0  # for the whole reply: a client that stops reading loses it
_MAX_REQUEST_HEAD = 256 * 1024
# A client's look at whether a daemon runs holds the lock for an instant; a daemon replaced
# for running older code lets go of it once it has finished what it was answering.
_LOCK_TRIES = 150


def serve(
    app: App,
    stamp: str,
    runtime_dir: str | None,
    *,
    warm: bool = True,
    host_mcp: bool = True,
) -> None:
    """Run until asked to stop (a `stop` request, SIGTERM or SIGINT, or a changed config),
    idle for `[daemon] idle_exit`, or left without its home or store (see Lifetime).
    With `host_mcp` the daemon hosts the MCP sessions of `contextd mcp serve` relays; they
    end once it has let go of its socket and lock, so a relay that reconnects finds a
    successor, or none.

    Raises:
        rendezvous.Unsafe: the place for the socket is not this user's alone.
        OSError: the home cannot be written.
    """
    hosting = Hosting(McpSessions(app)) if host_mcp else None
    try:
        _serve(app, stamp, runtime_dir, warm, hosting)
    finally:
        if hosting is not None:
            hosting.stop()


def _serve(
    app: App, stamp: str, runtime_dir: str | None, warm: bool, hosting: Hosting | None
) -> None:
    home = app.settings.home
    with _lock_file(home) as held:
        if not held:
            log.info("a daemon is already running for %s", home)
            return
        spot = rendezvous.claim(str(home), runtime_dir)
        if warm:
            app.db.warm()  # a server's connection pool, open before the first prompt
            app.index.warm()
        stopping = threading.Event()
        store = None if app.settings.on_server else app.settings.db_path
        lifetime = Lifetime(home, store, app.settings.daemon.idle_exit_s)
        handlers = Handlers(app, stamp, stopping, hosting, lifetime)
        if app.indexer is not None:
            filler = VectorFiller(app, stopping)
            app.vectors_wanted = filler.want
            filler.start()
        if app.settings.sync.pull_every_s:
            ScheduledPull(app, stopping, app.settings.sync.pull_every_s).start()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda _signum, _frame: stopping.set())
        pid_file = home / "daemon.pid"
        bound: os.stat_result | None = None
        try:
            with _listening(spot) as (listener, bound):
                rendezvous.publish(str(home), spot)
                _write_private(pid_file, str(os.getpid()))
                log.info("listening on %s", spot.path)
                _answer_until(stopping, listener, handlers, hosting, lifetime)
        finally:
            rendezvous.withdraw(str(home), spot, bound)
            _remove_own(pid_file)


def _answer_until(
    stopping: threading.Event,
    listener: socket.socket,
    handlers: Handlers,
    hosting: Hosting | None,
    lifetime: Lifetime,
) -> None:
    intake = Intake(listener, _MAX_REQUEST_HEAD)
    try:
        with ThreadPoolExecutor(WORKERS, thread_name_prefix="contextd-request") as pool:
            while not stopping.is_set():
                for request in intake.wait(_ACCEPT_TICK_S):
                    pool.submit(_serve_request, request, handlers, hosting)
                reason = lifetime.reason(busy=hosting is not None and hosting.busy())
                if reason:
                    log.info("stopping: %s", reason)
                    stopping.set()
    finally:
        intake.close()


def _remove_own(pid_file: Path) -> None:
    """Remove the pid file when it is still this process's (a home replaced meanwhile may
    hold another daemon's)."""
    try:
        if pid_file.read_text(encoding="utf-8").strip() == str(os.getpid()):
            pid_file.unlink()
    except OSError:
        pass


def _serve_request(request: Arrived, handlers: Handlers, hosting: Hosting | None) -> None:
    handed_over = False
    try:
        handed_over = _answer(request, handlers, hosting)
    finally:
        if not handed_over:
            request.conn.close()


def _answer(request: Arrived, handlers: Handlers, hosting: Hosting | None) -> bool:
    """Answer a request that arrived whole; True when an MCP session now owns its connection."""
    conn = request.conn
    conn.settimeout(_SEND_TIMEOUT_S)
    reply, out, session = handlers.answer(request.head, request.body)
    sent = _send(conn, frames.encode(reply, out))
    if session is None or hosting is None:
        return False
    if not sent:
        hosting.release()
        return False
    hosting.start(conn, session)
    return True


@contextmanager
def _lock_file(home: Path) -> Iterator[bool]:
    handle = open_private(home / LOCK_FILE, os.O_RDWR | os.O_CREAT)
    try:
        if not _take_lock(handle):
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        os.close(handle)


def _take_lock(handle: int) -> bool:
    for attempt in range(_LOCK_TRIES):
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if attempt + 1 < _LOCK_TRIES:
                time.sleep(0.02)
            continue
        return True
    return False


@contextmanager
def _listening(spot: rendezvous.Spot) -> Iterator[tuple[socket.socket, os.stat_result]]:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        old_mask = os.umask(0o177)  # owner only from the first moment
        try:
            listener.bind(spot.path)
        finally:
            os.umask(old_mask)
        os.chmod(spot.path, PRIVATE_FILE)
        bound = os.lstat(spot.path)
        listener.listen(64)
        yield listener, bound
    finally:
        listener.close()


def _write_private(path: Path, text: str) -> None:
    handle = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        os.write(handle, text.encode("utf-8"))
    finally:
        os.close(handle)


def _send(conn: socket.socket, reply: bytes) -> bool:
    try:
        conn.sendall(reply)
    except OSError:
        log.info("the client left before its reply")
        return False
    return True


class VectorFiller:
    """Embeds records stored without a vector on a thread of its own, when told some arrived
    (a checkout's new record files) and once at start, so queries never wait for them."""

    def __init__(self, app: App, stopping: threading.Event) -> None:
        self._app = app
        self._stopping = stopping
        self._wanted = threading.Event()
        self._thread = threading.Thread(target=self._run, name="contextd-vectors", daemon=True)

    def start(self) -> None:
        self._wanted.set()
        self._thread.start()

    def want(self) -> None:
        self._wanted.set()

    def _run(self) -> None:
        while not self._stopping.is_set():
            if not self._wanted.wait(_ACCEPT_TICK_S):
                continue
            self._wanted.clear()
            try:
                count = self._app.index.refresh()
            except Exception:  # a provider that fails now is tried again on the next want
                log.warning("filling missing vectors failed", exc_info=True)
                continue
            if count:
                log.info("embedded %d records that had no vector", count)
