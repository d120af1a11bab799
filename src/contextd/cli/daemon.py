"""`contextd daemon start|stop|status|run`: the warm process the hooks, `search` and `recall`
talk to."""

import logging
import os
import sys
import time
from typing import Any

import click

from contextd.cli._context import common_options, get_app, get_settings
from contextd.cli._groups import SuggestingGroup
from contextd.cli._output import emit
from contextd.errors import DaemonError
from contextd.home_folder import make_private
from contextd.text.printer import echo
from contextd.wire import rendezvous, to_daemon

__all__ = ["COMMANDS", "OUTDATED", "ask_daemon", "outdated"]

OUTDATED = (
    "It runs other contextd code than this one (it started before an upgrade), so it declines "
    "every request; the next hook or command replaces it, or now: `contextd daemon stop && "
    "contextd daemon start`."
)


def outdated(pong: dict[str, Any]) -> bool:
    """Whether a daemon's ping reply says it runs other contextd code than this process."""
    return bool(pong.get("stamp", to_daemon.code_stamp()) != to_daemon.code_stamp())


_START_WAIT_S = 60.0  # the first start loads the model and the vectors
_FAILURE = "Error: "  # how `daemon run` reports why it could not start (see _why_it_failed)


@click.group(cls=SuggestingGroup)
def daemon() -> None:
    """The warm daemon: keeps the model, the store and the vectors loaded for the hooks."""


def ask_daemon(home: str, kind: str) -> dict[str, Any] | None:
    """The daemon's answer to a ping or stop; None when none runs.

    Raises:
        DaemonError: something at the daemon's socket is not this user's own.
    """
    try:
        reply = to_daemon.ask(home, {"kind": kind})
    except rendezvous.Unsafe as exc:
        raise DaemonError(str(exc)) from None
    return reply[0] if reply is not None else None


def _socket(home: str) -> str | None:
    try:
        return rendezvous.find(home)
    except rendezvous.Unsafe:
        return None


@daemon.command()
@common_options
def start() -> None:
    """Start the daemon in the background (nothing to do when it already runs)."""
    home = get_settings().home
    running = ask_daemon(str(home), "ping")
    action = "already running"
    if running is None:
        from contextd.wire.launch import start_detached

        _prepare(home)
        try:
            process = start_detached(home)
        except OSError as exc:
            raise DaemonError(f"Cannot start the daemon in {home}: {exc.strerror}.") from None
        running = _wait_for(str(home), process)
        action = "started"
    payload = {"action": action, "pid": running["pid"], "socket": _socket(str(home))}
    emit(payload, lambda: echo(f"Daemon {action} (pid {running['pid']})."))


def _prepare(home: Any) -> None:
    """A home the daemon can run in: private, writable."""
    try:
        note = make_private(home)
    except OSError as exc:
        raise DaemonError(f"Cannot create {home}: {exc.strerror}.") from None
    if note:
        echo(note, err=True)
    if not os.access(home, os.W_OK):
        raise DaemonError(
            f"{home} is read-only, and the daemon keeps its lock and socket record there; "
            "commands and hooks work without it."
        )


def _wait_for(home: str, process: Any) -> dict[str, Any]:
    deadline = time.monotonic() + _START_WAIT_S
    while time.monotonic() < deadline:
        reply = ask_daemon(home, "ping")
        if reply is not None:
            return reply
        if process.poll() is not None:
            raise DaemonError(_why_it_failed(home))
        time.sleep(0.05)
    raise DaemonError(
        f"The daemon did not answer within {_START_WAIT_S:.0f} s; see {home}/daemon.log for why."
    )


def _why_it_failed(home: str) -> str:
    """The reason `daemon run` gave, from the end of its log."""
    from contextd.wire.launch import LOG_FILE

    try:
        with open(os.path.join(home, LOG_FILE), encoding="utf-8", errors="replace") as log:
            lines = log.read()[-8192:].splitlines()
    except OSError:
        lines = []
    reasons = [line[len(_FAILURE) :] for line in lines if line.startswith(_FAILURE)]
    if reasons:
        return f"The daemon could not start: {reasons[-1]}"
    return f"The daemon stopped as it started; see {home}/daemon.log for why."


@daemon.command()
@common_options
def stop() -> None:
    """Stop the daemon (the hooks then work in-process, more slowly)."""
    home = str(get_settings().home)
    reply = ask_daemon(home, "stop")
    if reply is None:
        emit({"action": "not running"}, lambda: echo("No daemon is running."))
        return
    deadline = time.monotonic() + 10
    while ask_daemon(home, "ping") is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    emit(
        {"action": "stopped", "pid": reply["pid"]},
        lambda: echo(f"Daemon stopped (pid {reply['pid']})."),
    )


@daemon.command()
@common_options
def status() -> None:
    """Whether the daemon runs, its pid, uptime and memory."""
    home = str(get_settings().home)
    reply = ask_daemon(home, "ping")
    if reply is None:
        emit({"running": False}, lambda: echo("Daemon: not running."))
        return
    rss_mb = _rss_mb(int(reply["pid"]))
    payload = {
        "running": True,
        "pid": reply["pid"],
        "uptime_s": round(float(reply["uptime_s"]), 1),
        "rss_mb": rss_mb,
        "socket": _socket(home),
        "idle_s": round(float(reply.get("idle_s", 0)), 1),
        "idle_exit_s": reply.get("idle_exit_s"),
        "outdated": outdated(reply),
    }

    def human() -> None:
        memory = f", {rss_mb:.0f} MB resident" if rss_mb is not None else ""
        echo(f"Daemon: running (pid {reply['pid']}, up {payload['uptime_s']:.0f} s{memory}).")
        if payload["outdated"]:
            echo(OUTDATED)
        limit = payload["idle_exit_s"]
        if isinstance(limit, int | float):
            ends = f"it stops after {_span(limit)} unasked" if limit else "it never stops idle"
            echo(f"Last asked {_span(float(payload['idle_s']))} ago; {ends}.")

    emit(payload, human)


def _span(seconds: float) -> str:
    """90 s, 30 min, 3 h: as a person says a length of time."""
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{seconds / size:.1f}".removesuffix(".0") + f" {unit}"
    return f"{seconds:.0f} s"


def _rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status_file:
            for line in status_file:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


@daemon.command()
@common_options
def run() -> None:
    """Run the daemon in the foreground (what `start` runs in the background)."""
    from contextd.daemon.server import serve

    stamp = to_daemon.code_stamp()  # of the code this process loads from now on
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    home = get_settings().home
    _prepare(home)
    app = get_app()
    try:
        serve(app, stamp, os.environ.get("XDG_RUNTIME_DIR"))
    except rendezvous.Unsafe as exc:
        raise DaemonError(str(exc)) from None
    except OSError as exc:
        raise DaemonError(f"The daemon cannot listen: {exc.strerror or exc}.") from None


COMMANDS = [daemon]
