"""The one client a stdio server talks to: its name, the project each call is about, and the
session it opens; and the resolvers that hand a tool its place (`Here`), which the SDK fills
before a tool runs, never the model.

Over HTTP (contextd.http) every request is a connection of its own (`serving`): the server's
lifespan, entered once for all of them, cannot say whose a call is.
"""

import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated, Any

from mcp.server.mcpserver import Context, ListRoots, Resolve
from mcp.types import ListRootsResult

from contextd.app import App
from contextd.core.recall.presentation import one_line
from contextd.errors import ContextdError
from contextd.mcp.project import Chooser, Place, ServerPlace
from contextd.models import Project
from contextd.provenance import changes_via

__all__ = ["Connection", "Here", "connection_middleware", "connection_of", "serving"]

# The connection of the HTTP request being answered (see `serving`); None on stdio.
_REQUEST: ContextVar["Connection | None"] = ContextVar("contextd_mcp_request", default=None)


class Connection:
    """Which project a call is about is contextd.mcp.project's to say; the session opens with
    the first call that resolves one, named after the client, and closes with the connection.

    A `lasting` connection (one HTTP request) joins the developer's session open on the
    project, or opens one, and leaves it open: the developer's next request, to whichever
    server process, carries on in it.
    """

    def __init__(
        self,
        app: App,
        where: ServerPlace | None = None,
        *,
        client_name: str | None = None,
        guessed_name: str | None = None,
        on_name: Callable[[str], None] | None = None,
        lasting: bool = False,
        via: str = "mcp",
    ) -> None:
        """`guessed_name`: what to call the client until it says its name (an HTTP request
        may not: the name comes with `initialize`, a request of its own); `on_name` hears the
        name when it does."""
        self.app = app
        self.client_name = client_name or guessed_name
        self._guessed = client_name is None and guessed_name is not None
        self._on_name = on_name
        self._via = via
        self.chooser = Chooser(app, where)
        self.session_id: str | None = None
        self._lasting = lasting
        self._opening = threading.Lock()  # tool calls run in threads: open one session only

    @property
    def via(self) -> str:
        """Through what this connection's changes come, for each record's log."""
        return f"{self._via} ({self.client_name})" if self.client_name else self._via

    def wants_roots(
        self, name: str | None, capabilities: Any
    ) -> ListRootsResult | ListRoots | None:
        """The client's roots, when the call needs them: known ones, or a request for them."""
        if self.chooser.roots is not None:
            return self.chooser.roots
        try:
            if self.chooser.fixed(name) is not None:
                return None
        except ContextdError:
            return None  # the call itself reports the bad name
        if capabilities is None or capabilities.roots is None:
            return None
        return ListRoots()

    def place(self, name: str | None, roots: ListRootsResult | None) -> Place:
        place = self.chooser.place(name, roots)
        if place.choice is not None:
            self.open_session(place.choice.project)
        return place

    def open_session(self, project: Project) -> None:
        with self._opening:
            if self.session_id is not None or self.client_name is None:
                return
            if self._lasting:
                found = self.app.sessions.open_for(project)
                if found is not None:
                    self.session_id = found.id
                    return
            try:
                self.session_id = self.app.sessions.start(project, self.client_name).id
            except ContextdError:
                return  # a client name that is refused: tools still answer

    def close(self) -> None:
        with self._opening:
            if self.session_id is not None and not self._lasting:
                self.app.sessions.end(self.session_id)

    def heard(self, method: str, params: object) -> None:
        """Note what an inbound message says of the client: its name, changed roots."""
        if self.client_name is None or self._guessed:
            named = _client_name(params)
            if named is not None:
                self.client_name, self._guessed = named, False
                if self._on_name is not None:
                    self._on_name(named)
        if method == "notifications/roots/list_changed":
            self.chooser.roots = None


@contextmanager
def serving(connection: Connection) -> Iterator[None]:
    """Within the block (one HTTP request), `connection` is the one every call arrives on."""
    token = _REQUEST.set(connection)
    try:
        yield
    finally:
        _REQUEST.reset(token)


def _arriving_on(lifespan_context: object) -> object:
    return _REQUEST.get() or lifespan_context


async def connection_middleware(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
    """Every inbound message, seen by the connection it arrives on (the server's lifespan
    yields one per connection, so one server may serve several)."""
    connection = _arriving_on(ctx.lifespan_context)
    if not isinstance(connection, Connection):
        return await call_next(ctx)
    connection.heard(ctx.method, ctx.params)
    with changes_via(connection.via):
        return await call_next(ctx)


def _client_name(params: object) -> str | None:
    """The client's name: from `initialize` (clientInfo), or, in protocol versions without a
    handshake, from the clientInfo every request carries in its _meta."""
    if not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    info = params.get("clientInfo") or (
        meta.get("io.modelcontextprotocol/clientInfo") if isinstance(meta, dict) else None
    )
    if not isinstance(info, dict):
        return None
    return one_line(str(info.get("name") or ""))[:100] or "mcp client"


def connection_of(ctx: Context) -> Connection:
    """The connection a call arrives on."""
    # The server's lifespan yields it (on stdio), or the HTTP request set it.
    connection = _arriving_on(ctx.request_context.lifespan_context)
    assert isinstance(connection, Connection)
    return connection


def _wants_roots(project: str | None, ctx: Context) -> ListRootsResult | ListRoots | None:
    return connection_of(ctx).wants_roots(project, ctx.client_capabilities)


def _where(
    project: str | None,
    roots: Annotated[ListRootsResult | None, Resolve(_wants_roots)],
    ctx: Context,
) -> Place:
    return connection_of(ctx).place(project, roots)


# The place a tool works in: its project (from its `project` argument, the environment, the
# client's roots asked for within the call, or the server's folder) and how it was chosen.
Here = Annotated[Place, Resolve(_where)]
