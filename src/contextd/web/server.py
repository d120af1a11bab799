"""Running the web view: a socket on 127.0.0.1 only (a free port unless one is asked for),
uvicorn without an access log (URLs would carry the token) and with limits on its
connections (contextd.web.admission), and the browser opened through a private file so the
token never appears on a command line."""

import errno
import os
import signal
import socket
import webbrowser
from collections.abc import Callable
from pathlib import Path

import uvicorn

from contextd.app import App
from contextd.errors import InvalidInputError
from contextd.home_folder import open_private
from contextd.web.access import Access
from contextd.web.admission import admitting
from contextd.web.application import build_app

__all__ = ["LOOPBACK", "bind", "open_in_browser", "serve"]

LOOPBACK = "127.0.0.1"


def bind(port: int, host: str = LOOPBACK) -> socket.socket:
    """A listening socket on `host` (the loopback address unless another is asked for);
    port 0 takes a free one."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # Named TCP, so that asyncio turns Nagle's algorithm off on each connection accepted
    # (it does so only for sockets whose proto says TCP): with it on, a small reply written in
    # two parts waited for the client's delayed ACK, 40 ms a request on a kept-alive connection.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except socket.gaierror as exc:
        sock.close()
        raise InvalidInputError(f"{host!r} is not an address this machine has.") from exc
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise InvalidInputError(
                f"Port {port} is already in use; pick another with --port, or leave it out for "
                "a free one."
            ) from exc
        raise InvalidInputError(f"Cannot listen on {host}:{port} ({exc.strerror}).") from exc

    sock.listen(64)
    return sock


def open_in_browser(access: Access, launcher: Path) -> None:
    """Open the view in the default browser. The browser is given `launcher`, a file in the
    private home that forwards to the address: a URL passed as an argument would show the
    token to every user of the machine (in the process list)."""
    launcher.unlink(missing_ok=True)
    page = (
        '<!doctype html><meta charset="utf-8"><title>contextd</title>'
        f'<meta http-equiv="refresh" content="0;url={access.url}">'
        f'<a href="{access.url}">Open contextd</a>\n'
    )
    with os.fdopen(open_private(launcher, os.O_WRONLY | os.O_CREAT | os.O_EXCL), "wb") as handle:
        handle.write(page.encode())
    webbrowser.open(launcher.as_uri())


def serve(
    core: App,
    *,
    port: int,
    write: bool,
    open_browser: bool,
    announce: Callable[[Access], None],
) -> None:
    """Serve the web view until interrupted (Ctrl-C or SIGTERM)."""
    sock = bind(port)
    access = Access(sock.getsockname()[1], write=write)
    config = uvicorn.Config(
        build_app(core, access),
        access_log=False,  # request lines carry the token on the first visit
        log_level="warning",
        server_header=False,
        proxy_headers=False,
        lifespan="off",
        http=admitting(),  # h11, with read deadlines and a cap on open connections
        ws="none",  # no upgrade may take a connection out of those limits
    )
    server = uvicorn.Server(config)
    # Named before the browser starts: Ctrl-C while it does still removes the file.
    launcher = core.settings.home / f"ui-{access.port}.html" if open_browser else None
    # uvicorn shuts down on SIGTERM, then raises it again under the handler it found: let
    # that be this one, so the process ends through the `finally` below, not around it.
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        announce(access)
        if launcher is not None:
            open_in_browser(access, launcher)
        server.run(sockets=[sock])
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
        if launcher is not None:
            launcher.unlink(missing_ok=True)


def _stop(_signal: int, _frame: object) -> None:
    raise KeyboardInterrupt  # a stop asked for, as Ctrl-C is
