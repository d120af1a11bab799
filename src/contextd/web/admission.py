"""The web view's connections, below the app: how long a client may take, and how many may
be open at once.

Any local user can connect to 127.0.0.1, token or not, and uvicorn alone waits for a
request's headers for as long as they take and keeps any number of connections open. Here
a connection has a deadline whenever it waits on its client: HEADERS_S for a request's line
and headers (from the connection, or from the reply before), BODY_S for its body, STALLED_S
for a reply it does not read, or while it is closing. Once a request is whole, the app has
the time it needs. At most MAX_CONNECTIONS are open: one more closes the one that has waited
on its client the longest, so a stranger holding half-sent requests cannot keep the owner's
browser out; when every open one is being answered, the new one gets a 503 at once.

(uvicorn's limit_concurrency is not used: it counts connections whose request has not
arrived, so a stranger holding them would turn the owner's request away.)
"""

import asyncio
import resource
from typing import ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from contextd.web.guard import MAX_BODY

__all__ = [
    "BODY_S",
    "HEADERS_S",
    "MAX_BODY_BYTES",
    "MAX_CONNECTIONS",
    "STALLED_S",
    "admitting",
]

HEADERS_S = 5.0  # a browser sends its headers at once
BODY_S = 15.0  # the largest form, 512 KB, at 35 KB/s
STALLED_S = 15.0
MAX_BODY_BYTES = MAX_BODY + 64 * 1024  # what the Guard allows, and chunk framing
MAX_CONNECTIONS = 256  # a browser opens about 6

_BUSY_TEXT = b"The view is busy; reload the page in a moment.\n"
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(_BUSY_TEXT), _BUSY_TEXT)
)
_LIMITS = {"headers": HEADERS_S, "body": BODY_S, "stalled": STALLED_S, "closing": STALLED_S}
_TOO_LARGE_TEXT = (
    b"The request's headers are too large (over 16 KB); send a shorter request line and "
    b"fewer or shorter headers.\n"
)
_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
    b"content-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\nconnection: close\r\n"
    b"\r\n%s" % (len(_TOO_LARGE_TEXT), _TOO_LARGE_TEXT)
)


def admitting(
    most: int | None = None,
    *,
    body_bytes: int = MAX_BODY_BYTES,
    headers_s: float = HEADERS_S,
) -> type[H11Protocol]:
    """uvicorn's h11 protocol under these limits, for one server: its connections are
    counted together, at most `most` (by default MAX_CONNECTIONS, fewer when the process may
    open few files); a request body over `body_bytes` closes its connection; `headers_s` for
    a request's headers (another server than the view may give its clients longer)."""
    shared = _Gate(most if most is not None else _connections_allowed())

    class Admitted(_Admitted):
        gate = shared
        most_body = body_bytes
        limits = {**_LIMITS, "headers": headers_s}

    return Admitted


def _connections_allowed() -> int:
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return MAX_CONNECTIONS if soft == resource.RLIM_INFINITY else min(MAX_CONNECTIONS, soft // 2)


class _Gate:
    """The open connections of one server; those waiting on their client, longest first."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.open: set[_Admitted] = set()
        self.waiting: dict[_Admitted, None] = {}

    def enter(self, newcomer: "_Admitted") -> None:
        self.open.add(newcomer)
        if len(self.open) <= self.most:
            return
        longest = next(iter(self.waiting), None)
        if longest is None:
            newcomer.refuse()
        else:
            longest.close_now()

    def leave(self, connection: "_Admitted") -> None:
        self.open.discard(connection)
        self.waiting.pop(connection, None)

    def waits(self, connection: "_Admitted", waiting: bool) -> None:
        self.waiting.pop(connection, None)
        if waiting:
            self.waiting[connection] = None


class _Admitted(H11Protocol):
    gate: ClassVar[_Gate]
    most_body: ClassVar[int]
    limits: ClassVar[dict[str, float]]
    _phase: str | None = None
    _timer: asyncio.TimerHandle | None = None
    _stalled = False
    _body_bytes = 0
    _draining = False  # answered already: what the client still sends is read and dropped

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.gate.enter(self)
        self._follow()

    def data_received(self, data: bytes) -> None:
        if self._draining:
            return
        if self._phase == "headers" and self._headers_overflow(data):
            self._refuse_headers()
            return
        if self._phase == "body":
            self._body_bytes += len(data)
            if self._body_bytes > self.most_body:
                self.close_now()
                return
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow()

    def pause_writing(self) -> None:
        super().pause_writing()
        self._stalled = True
        self._follow()

    def resume_writing(self) -> None:
        super().resume_writing()
        self._stalled = False
        self._follow()

    def connection_lost(self, exc: Exception | None) -> None:
        self._forget()
        super().connection_lost(exc)

    def _headers_overflow(self, data: bytes) -> bool:
        """Whether the request's line and headers so far pass what h11 takes (it would fail
        the request with a bare 400)."""
        most = self.conn._max_incomplete_event_size
        waiting, _closed = self.conn.trailing_data
        start = (bytes(waiting) + data[: most + 4])[: most + 4]  # what may be the line and headers
        return len(start) > most and b"\r\n\r\n" not in start

    def _refuse_headers(self) -> None:
        """Answer 431 in one sentence, then read and drop what the client still sends until it
        leaves or the closing deadline: closing with its bytes unread would reset the
        connection before the client reads the answer."""
        self._draining = True
        self.transport.write(_TOO_LARGE)
        if self._timer is not None:
            self._timer.cancel()
        self._phase = "closing"
        self.gate.waits(self, True)
        self._timer = self.loop.call_later(self.limits["closing"], self.close_now)

    def refuse(self) -> None:
        """Answer 503 without reading the request, and close."""
        self._forget()
        self.transport.write(_BUSY)
        self.transport.close()

    def close_now(self) -> None:
        self._forget()
        self.transport.abort()

    def _forget(self) -> None:
        self.gate.leave(self)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._phase = "gone"

    def _follow(self) -> None:
        """Start the deadline of what the connection now waits for, if that changed."""
        if self._phase == "gone":
            return
        phase = self._waiting_for()
        if phase == self._phase:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._phase = phase
        self._body_bytes = 0
        self.gate.waits(self, phase is not None)
        if phase is not None:
            self._timer = self.loop.call_later(self.limits[phase], self.close_now)

    def _waiting_for(self) -> str | None:
        """What of its client the connection waits for; None while the app answers."""
        if self.transport.is_closing():
            return "closing"
        if self._stalled:
            return "stalled"
        state = self.conn.their_state
        if state is h11.IDLE:
            return "headers"
        if state is h11.SEND_BODY:
            return "body"
        return None
