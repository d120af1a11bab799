"""What the daemon answers, over the core services of one warm App.

Each request is decoded into its type (contextd.service.requests) and answered by
contextd.service.answer, the code a command runs in its own process: a JSON head and, for a
hook, the bytes the hook prints. A refusal of the core (a rule a write breaks, no project
here) goes back as its facts, for the client to word. The daemon acts only for its own home,
with the code and settings it started with: a request it must not answer is declined, and
the client then does the work itself.
"""

import logging
import os
import threading
import time

import msgspec

from contextd.app import App
from contextd.daemon.hosting import Hosting
from contextd.daemon.lifetime import Lifetime
from contextd.errors import ContextdError
from contextd.following import config_signature
from contextd.service.answer import answer
from contextd.service.requests import (
    HookAsk,
    McpAsk,
    Ping,
    RecallAsk,
    Request,
    SearchAsk,
    Stop,
    WriteAsk,
    decode_request,
)

__all__ = ["Declined", "Handlers"]

log = logging.getLogger(__name__)
_ENCODER = msgspec.json.Encoder()


class Declined(Exception):
    """This daemon must not answer the request; the client does the work itself."""


class Outdated(Declined):
    """This daemon runs other contextd code than its client (started before an upgrade): the
    client stops it and starts one of its own code."""


class Handlers:
    """Answers requests for one App; safe to call from several threads at once."""

    def __init__(
        self,
        app: App,
        stamp: str,
        stopping: threading.Event,
        hosting: Hosting | None = None,
        lifetime: Lifetime | None = None,
    ) -> None:
        """`lifetime` is told of every request but a ping (which only asks whether it runs)."""
        self._app = app
        self._lifetime = lifetime
        self._hosting = hosting
        self._stamp = stamp
        self._stopping = stopping
        self._started = time.time()
        self._home = os.stat(app.settings.home)
        self._config = config_signature(app.settings.config_path)

    def answer(self, head: bytes, body: bytes) -> tuple[bytes, bytes, McpAsk | None]:
        """The reply's head and body for one request's; and, when the reply is an MCP
        session's ok, the session to run on the connection after it (its slot reserved:
        the caller starts it, or releases the slot)."""
        try:
            request = decode_request(head)
        except msgspec.DecodeError as exc:
            return _refusal(f"not a request this daemon knows ({exc})"), b"", None
        try:
            reply, out = self._dispatch(request, body)
        except Declined as exc:
            log.info("declined a %s request: %s", type(request).__name__, exc)
            return _refusal(str(exc), outdated=isinstance(exc, Outdated)), b"", None
        except Exception as exc:  # one bad request must not take the daemon down
            log.warning("a %s request failed: %s", type(request).__name__, type(exc).__name__)
            log.debug("the failure", exc_info=True)
            return _refusal(f"{type(exc).__name__}: {exc}"), b"", None
        hosted = request if isinstance(request, McpAsk) else None
        return _ENCODER.encode({"ok": True, **reply}), out, hosted

    def _dispatch(self, request: Request, body: bytes) -> tuple[dict[str, object], bytes]:
        if isinstance(request, Ping):
            return self._pong(), b""
        if self._lifetime is not None:
            self._lifetime.touch()
        if isinstance(request, Stop):
            self._stopping.set()
            return {"pid": os.getpid()}, b""
        self._check(request)
        if isinstance(request, McpAsk):
            self._reserve_session()
            return {}, b""
        if isinstance(request, HookAsk):
            try:
                return answer(self._app, request, body)
            except ValueError as exc:
                raise Declined(str(exc)) from None
        try:
            return answer(self._app, request, body)
        except ContextdError as exc:  # the client words it, as the command in process would
            return {"refused": exc.facts()}, b""

    def _pong(self) -> dict[str, object]:
        reply: dict[str, object] = {
            "pid": os.getpid(),
            "uptime_s": time.time() - self._started,
            "stamp": self._stamp,
        }
        if self._lifetime is not None:
            reply["idle_s"] = self._lifetime.idle_s()
            reply["idle_exit_s"] = self._lifetime.idle_exit_s
        return reply

    def _reserve_session(self) -> None:
        if self._hosting is None:
            raise Declined("this daemon hosts no MCP sessions")
        if not self._hosting.reserve():
            raise Declined("this daemon hosts as many MCP sessions as it may, or is stopping")

    def _check(self, request: HookAsk | SearchAsk | RecallAsk | WriteAsk | McpAsk) -> None:
        if request.stamp != self._stamp:
            raise Outdated(
                "this daemon runs other contextd code than its client; the client replaces it"
            )
        try:
            same = os.path.samestat(os.stat(request.home), self._home)
        except OSError:
            same = False
        if not same:
            raise Declined(f"this daemon serves {self._app.settings.home}, not {request.home}")
        if config_signature(self._app.settings.config_path) != self._config:
            self._stopping.set()  # the next session-start starts one that reads it
            raise Declined(f"{self._app.settings.config_path} changed; this daemon stops")


def _refusal(error: str, *, outdated: bool = False) -> bytes:
    return _ENCODER.encode(
        {"ok": False, "error": error, **({"outdated": True} if outdated else {})}
    )
