"""Reading requests off their connections before any worker is given one.

The accept loop's thread takes each connection, checks who is at the other end, and reads
its frame as the bytes arrive, for every connection at once; a worker gets a request only
once it has arrived whole, so a slow or stalled client holds a socket, never a worker. A
request must arrive within REQUEST_DEADLINE_S of its connection, counted for the whole
frame and not per read (a client dripping a byte at a time is closed when the time is up),
and at most MAX_PENDING connections are read at once (fewer when the process may open few
files): one more closes the oldest of them.
Nothing past the frame is read: an MCP session's stream follows it on the same connection.
"""

import json
import logging
import resource
import selectors
import socket
import time
from typing import NamedTuple

from contextd.wire import frames, rendezvous

__all__ = ["MAX_PENDING", "REQUEST_DEADLINE_S", "Arrived", "Intake"]

log = logging.getLogger(__name__)

REQUEST_DEADLINE_S = 5.0  # a client sends its frame at once; a hook gives up after 1 s
MAX_PENDING = 32  # connections whose request is still arriving
_ACCEPTS_AT_ONCE = 64  # then the arriving requests get their turn
_ACCEPT_PAUSE_S = 1.0  # after accept failed (out of descriptors), as asyncio waits
_CHUNK = 1 << 20


class Arrived(NamedTuple):
    """A request read whole; the connection is blocking again, and the receiver's to close."""

    conn: socket.socket
    head: bytes
    body: bytes


class _Arriving:
    """A frame read so far: its prefix, then its head and body together."""

    __slots__ = ("conn", "due", "head_size", "parts", "got", "want")

    def __init__(self, conn: socket.socket, due: float) -> None:
        self.conn = conn
        self.due = due
        self.head_size: int | None = None  # known once the prefix is in
        self.parts: list[bytes] = []
        self.got = 0
        self.want = frames.PREFIX_SIZE


class Intake:
    """The listening socket and the connections whose requests are arriving."""

    def __init__(
        self,
        listener: socket.socket,
        max_head: int,
        *,
        deadline_s: float = REQUEST_DEADLINE_S,
        max_pending: int | None = None,
    ) -> None:
        self._listener = listener
        self._max_head = max_head
        self._deadline_s = deadline_s
        self._max_pending = max_pending if max_pending is not None else _pending_allowed()
        self._arriving: dict[socket.socket, _Arriving] = {}  # oldest first
        self._crowded = False  # said once until fewer arrive
        self._resume_at: float | None = None  # accepting again then, after a failed accept
        self._selector = selectors.DefaultSelector()
        listener.setblocking(False)
        self._selector.register(listener, selectors.EVENT_READ)

    def wait(self, seconds: float) -> list[Arrived]:
        """The requests that arrived whole within `seconds` (or sooner, when one is due)."""
        now = time.monotonic()
        if self._resume_at is not None and self._resume_at <= now:
            self._selector.register(self._listener, selectors.EVENT_READ)
            self._resume_at = None
        dues = [self._resume_at] if self._resume_at is not None else []
        if self._arriving:
            dues.append(next(iter(self._arriving.values())).due)
        seconds = max(0.0, min([seconds, *(due - now for due in dues)]))
        arrived = []
        for key, _events in self._selector.select(seconds):
            arriving: _Arriving | None = key.data
            if arriving is None:
                self._accept()
            elif self._arriving.get(arriving.conn) is not arriving:
                continue  # closed by this turn's accepts: one too many were arriving
            elif (request := self._read(arriving)) is not None:
                arrived.append(request)
        self._expire()
        return arrived

    def close(self) -> None:
        """Close every connection whose request has not arrived."""
        for arriving in list(self._arriving.values()):
            self._drop(arriving, None)
        self._selector.close()

    def _accept(self) -> None:
        for _ in range(_ACCEPTS_AT_ONCE):
            try:
                conn, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # out of descriptors: the queued ones wait a moment
                log.warning("cannot accept a connection (%s); trying again in 1 s", exc)
                self._selector.unregister(self._listener)
                self._resume_at = time.monotonic() + _ACCEPT_PAUSE_S
                return
            try:
                rendezvous.check_peer(conn, "client")
            except rendezvous.Unsafe as exc:
                log.warning("%s", exc)
                _refuse(conn, "not the daemon's user")
                continue
            except OSError as exc:  # gone already
                log.info("a client left at once: %s", exc)
                conn.close()
                continue
            self._admit(conn)

    def _admit(self, conn: socket.socket) -> None:
        if len(self._arriving) >= self._max_pending:
            if not self._crowded:
                log.warning(
                    "%d requests are arriving at once; closing the oldest", self._max_pending
                )
            self._crowded = True
            self._drop(next(iter(self._arriving.values())), "too many requests arriving at once")
        elif len(self._arriving) < self._max_pending // 2:
            self._crowded = False
        conn.setblocking(False)
        arriving = _Arriving(conn, time.monotonic() + self._deadline_s)
        self._arriving[conn] = arriving
        self._selector.register(conn, selectors.EVENT_READ, arriving)

    def _read(self, arriving: _Arriving) -> Arrived | None:
        try:
            chunk = arriving.conn.recv(min(arriving.want - arriving.got, _CHUNK))
        except (BlockingIOError, InterruptedError):
            return None
        except OSError as exc:
            log.info("a client sent no request: %s", exc)
            self._drop(arriving, None)
            return None
        if not chunk:
            log.info("a client closed its connection before its request was whole")
            self._drop(arriving, "not a frame")
            return None
        arriving.parts.append(chunk)
        arriving.got += len(chunk)
        if arriving.got < arriving.want:
            return None
        data = b"".join(arriving.parts)
        if arriving.head_size is None:
            try:
                head_size, body_size = frames.sizes(data, self._max_head)
            except frames.BadFrame as exc:
                log.info("a client sent no request: %s", exc)
                self._drop(arriving, "not a frame")
                return None
            arriving.head_size, arriving.parts, arriving.got = head_size, [], 0
            arriving.want = head_size + body_size
            if arriving.want:
                return None
            data = b""
        self._forget(arriving)
        arriving.conn.setblocking(True)
        return Arrived(arriving.conn, data[: arriving.head_size], data[arriving.head_size :])

    def _expire(self) -> None:
        now = time.monotonic()
        while self._arriving:
            oldest = next(iter(self._arriving.values()))
            if oldest.due > now:
                return
            log.info("a request did not arrive within %.0f s; closed it", self._deadline_s)
            self._drop(oldest, f"the request did not arrive within {self._deadline_s:.0f} s")

    def _drop(self, arriving: _Arriving, error: str | None) -> None:
        self._forget(arriving)
        if error is None:
            arriving.conn.close()
        else:
            _refuse(arriving.conn, error)

    def _forget(self, arriving: _Arriving) -> None:
        del self._arriving[arriving.conn]
        self._selector.unregister(arriving.conn)


def _pending_allowed() -> int:
    """MAX_PENDING, or fewer when the process may open few files (workers, hosted sessions
    and the store need theirs)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return MAX_PENDING if soft == resource.RLIM_INFINITY else max(1, min(MAX_PENDING, soft // 4))


def _refuse(conn: socket.socket, error: str) -> None:
    """Say why, if the socket takes it at once (a short reply always fits), and close."""
    conn.setblocking(False)
    reply = json.dumps({"ok": False, "error": error}).encode()
    try:
        conn.send(frames.encode(reply))
    except OSError:
        pass
    finally:
        conn.close()
