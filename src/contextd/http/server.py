"""Running `contextd serve`: uvicorn on the socket asked for, with TLS when given the files,
no access log (nothing a request carries is logged), no proxy headers trusted, and the web
view's connection limits (contextd.web.admission): a deadline on each request's headers
and body, and a cap on open connections that answers 503 at once."""

import contextlib
import ipaddress
from collections.abc import Callable
from pathlib import Path

import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

from contextd.app import App
from contextd.errors import InvalidInputError
from contextd.following import FollowedApp
from contextd.http.gate import MCP_PATH, Gate
from contextd.http.servers import TeamServers
from contextd.web.admission import admitting
from contextd.web.server import bind

__all__ = ["Listening", "is_loopback", "serve"]


class Listening:
    """Where the server listens, once it does."""

    def __init__(self, host: str, port: int, tls: bool) -> None:
        self.host = host
        self.port = port
        self.tls = tls

    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.tls else 'http'}://{shown}:{self.port}{MCP_PATH}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _Application:
    """The Gate, with the servers' task group running for the lifetime of the process."""

    def __init__(self, servers: TeamServers, gate: Gate) -> None:
        self._servers = servers
        self._gate: ASGIApp = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        await self._gate(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        async with self._servers.running():
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
        await send({"type": "lifespan.shutdown.complete"})


def serve(
    core: App,
    *,
    host: str,
    port: int,
    read_only: bool,
    tls: tuple[Path, Path] | None,
    announce: Callable[[Listening], None],
) -> None:
    """Serve MCP over HTTP at /mcp until interrupted (Ctrl-C, SIGTERM)."""
    limits = core.settings.serve
    body_bytes = limits.max_body_kb * 1024
    servers = TeamServers(read_only=read_only, body_bytes=body_bytes)
    sock = bind(port, host)
    tls_files: dict[str, str] = {}
    if tls is not None:
        tls_files = {"ssl_certfile": str(tls[0]), "ssl_keyfile": str(tls[1])}
    config = uvicorn.Config(
        _Application(servers, Gate(FollowedApp(core), servers)),
        access_log=False,  # nothing a request carries is logged
        log_level="warning",
        server_header=False,
        proxy_headers=False,
        lifespan="on",
        http=admitting(body_bytes=body_bytes + 64 * 1024, headers_s=limits.header_timeout_s),
        ws="none",
        timeout_graceful_shutdown=5,
        **tls_files,  # type: ignore[arg-type]
    )
    server = uvicorn.Server(config)
    try:
        config.load()  # a certificate that cannot be read fails here, in one sentence
    except (OSError, ValueError) as exc:
        sock.close()
        raise InvalidInputError(f"The TLS certificate or key cannot be used: {exc}.") from exc
    try:
        announce(Listening(host, sock.getsockname()[1], tls is not None))
        server.run(sockets=[sock])
    finally:
        with contextlib.suppress(OSError):
            sock.close()
