"""What every request to `contextd serve` passes before MCP: the path, the Origin check the
MCP spec asks of HTTP servers (a browser page on another site must not call a server it can
reach), the bearer token, the request rate of the token (counted in the store), and how many
requests this process answers at once: in all, and for one token and one developer, so a
client at its limit is refused while everyone else is served. No stream is held open: the
server is stateless, so it has nothing to send unasked, and a GET is answered 405 (the MCP
spec's answer for a server without one). Each refusal is quick and says what to do; no token
is ever logged or echoed.

A request let through runs as the token's developer (App.acting_in_store) on a connection of
its own (contextd.mcp.connection.serving), in the project its token names unless a tool's
`project` argument names another.
"""

import logging
import math
import time
from collections import Counter

import anyio
from starlette.types import Receive, Scope, Send

from contextd.app import App
from contextd.config import ServeSettings
from contextd.core.recall.presentation import one_line
from contextd.core.workspace.tokens import Caller
from contextd.errors import ContextdError
from contextd.following import FollowedApp
from contextd.http.metadata import metadata_reply, metadata_url
from contextd.http.replies import refusal
from contextd.http.servers import TeamServers
from contextd.mcp.connection import Connection, serving
from contextd.mcp.project import ServerPlace

__all__ = ["MCP_PATH", "Gate"]

MCP_PATH = "/mcp"

log = logging.getLogger(__name__)


_NAMES_KEPT = 1024  # clients whose names are remembered


class Gate:
    """The ASGI app of `contextd serve`."""

    def __init__(self, followed: FollowedApp, servers: TeamServers) -> None:
        self._followed = followed
        self._servers = servers
        self._said: str | None = None  # the restart note last logged
        self._in_flight = 0
        self._held: Counter[tuple[str, str]] = Counter()  # ("token" | "developer", name)
        # (token, User-Agent) -> the name its client gave at `initialize`, for the requests
        # after it, which do not repeat it (newest last; the oldest go past _NAMES_KEPT).
        self._client_names: dict[tuple[str, str], str] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # no websockets (uvicorn runs with ws="none"); lifespan is the app's
        path = str(scope["path"])
        if path.startswith("/.well-known/oauth-protected-resource"):
            await metadata_reply(scope)(scope, receive, send)
            return
        if path.rstrip("/") != MCP_PATH:
            await refusal(404, f"Nothing is served at {path}; MCP is at {MCP_PATH}.")(
                scope, receive, send
            )
            return
        core = self._followed.current()  # config.toml as it is now
        self._say_restart()
        limits = core.settings.serve
        problem = _origin_problem(scope, limits)
        if problem is not None:
            await refusal(403, problem)(scope, receive, send)
            return
        if scope["method"] == "GET":
            no_stream = (
                "This server opens no stream: it sends nothing unasked. POST MCP messages to "
                f"{MCP_PATH}."
            )
            await refusal(405, no_stream, {"allow": "POST, DELETE"})(scope, receive, send)
            return
        if self._in_flight >= limits.max_in_flight:
            busy = "The server is answering as many requests as it may; try again in a second."
            await refusal(503, busy, {"retry-after": "1"})(scope, receive, send)
            return
        self._in_flight += 1
        try:
            await self._admitted(core, scope, receive, send)
        finally:
            self._in_flight -= 1

    def _say_restart(self) -> None:
        note = self._followed.restart_note
        if note is not None and note != self._said:
            log.warning("%s", note)
        self._said = note

    async def _admitted(self, core: App, scope: Scope, receive: Receive, send: Send) -> None:
        limits = core.settings.serve
        presented = _bearer(scope)
        try:
            caller = await anyio.to_thread.run_sync(core.tokens.admit, presented or "")
            count = 0
            if caller is not None and limits.requests_per_minute:
                count = await anyio.to_thread.run_sync(core.tokens.count_request, caller)
        except ContextdError as exc:  # the store is down or refuses: say so, quickly
            await refusal(503, f"The store cannot be reached: {exc}", {"retry-after": "5"})(
                scope, receive, send
            )
            return
        if caller is None:
            await self._unauthorized(scope, receive, send, presented is not None)
            return
        if limits.requests_per_minute and count > limits.requests_per_minute:
            wait = max(1, math.ceil(60 - time.time() % 60))
            message = (
                f"Token {caller.token!r} made more than {limits.requests_per_minute} "
                f"requests this minute; try again in {wait} s."
            )
            await refusal(429, message, {"retry-after": str(wait)})(scope, receive, send)
            return
        held = [("token", caller.token), ("developer", caller.developer)]
        over = self._over_share(caller, limits)
        if over is not None:
            await refusal(429, over, {"retry-after": "1"})(scope, receive, send)
            return
        self._held.update(held)
        try:
            await self._serve(core, caller, scope, receive, send)
        finally:
            for key in held:
                self._held[key] -= 1
                if not self._held[key]:
                    del self._held[key]

    def _over_share(self, caller: Caller, limits: ServeSettings) -> str | None:
        """Why the caller may not have one more request answered now, if it may not."""
        if self._held["token", caller.token] >= limits.max_in_flight_per_token:
            return (
                f"Token {caller.token!r} has {limits.max_in_flight_per_token} requests "
                "being answered; wait for one to end, then try again."
            )
        if self._held["developer", caller.developer] >= limits.max_in_flight_per_developer:
            return (
                f"Developer {caller.developer!r} has {limits.max_in_flight_per_developer} "
                "requests being answered through their tokens; wait for one to end, then try "
                "again."
            )
        return None

    async def _serve(
        self, core: App, caller: Caller, scope: Scope, receive: Receive, send: Send
    ) -> None:
        app, transport = await self._servers.serving(core, caller.developer, caller.read_only)
        place = ServerPlace(app.settings.cwd, caller.project)
        via = f"http {caller.token}"
        agent = _agent(scope)
        known = (caller.token, agent)

        def learnt(name: str) -> None:
            self._client_names.pop(known, None)
            self._client_names[known] = name
            while len(self._client_names) > _NAMES_KEPT:
                del self._client_names[next(iter(self._client_names))]

        connection = Connection(
            app,
            place,
            client_name=self._client_names.get(known),
            guessed_name=agent,
            on_name=learnt,
            lasting=True,
            via=via,
        )
        with app.acting_in_store(), serving(connection):
            await transport.handle_request(scope, receive, send)

    async def _unauthorized(self, scope: Scope, receive: Receive, send: Send, had: bool) -> None:
        challenge = f'Bearer realm="contextd", resource_metadata="{metadata_url(scope)}"'
        if had:
            challenge += ', error="invalid_token"'
            message = (
                "The bearer token is not one this server admits (unknown, revoked or expired); "
                "ask for a new one (`contextd token create NAME`)."
            )
        else:
            message = (
                "This server needs a bearer token: send `Authorization: Bearer <token>` (made "
                "by `contextd token create NAME`)."
            )
        await refusal(401, message, {"www-authenticate": challenge})(scope, receive, send)


def _origin_problem(scope: Scope, limits: ServeSettings) -> str | None:
    """Why a request from a browser page may not come in (the MCP spec: a server must check
    Origin); None for agents, which send none."""
    origin = _header(scope, b"origin")
    if origin is None or origin in limits.allowed_origins.split():
        return None
    return (
        f"Requests from web pages at {one_line(origin)[:200]} are refused; list the origin in "
        "[serve] allowed_origins to allow it."
    )


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def _bearer(scope: Scope) -> str | None:
    """The token of `Authorization: Bearer <token>`, None when there is no such header."""
    value = _header(scope, b"authorization")
    if value is None:
        return None
    scheme, _, token = value.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def _agent(scope: Scope) -> str:
    """What the client calls itself (its User-Agent's first word), for the session it opens."""
    agent = (_header(scope, b"user-agent") or "").split(" ")[0]
    return one_line(agent)[:80] or "mcp client"
