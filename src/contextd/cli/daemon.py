"""`contextd daemon start|stop|status|run`: the warm process the hooks, `search` and `recall`
talk to."""

import logging
import sys
import time
from typing import Any

import click

from contextd.cli._context import common_options, get_app, get_settings
from contextd.cli._output import emit
from contextd.daemon import client
from contextd.daemon.launch import start_detached
from contextd.errors import DaemonError

__all__ = ["COMMANDS"]

_START_WAIT_S = 60.0  # the first start loads the model and the vectors


@click.group()
def daemon() -> None:
    """The warm daemon: keeps the model, the store and the vectors loaded for the hooks."""


def _ping(home: str) -> dict[str, Any] | None:
    reply = client.request(home, {"op": "ping"})
    return reply if reply and reply.get("ok") else None


@daemon.command()
@common_options
def start() -> None:
    """Start the daemon in the background (nothing to do when it already runs)."""
    home = str(get_settings().home)
    running = _ping(home)
    if running is None:
        log_path = get_settings().home / "daemon.log"
        get_settings().home.mkdir(parents=True, exist_ok=True)
        start_detached(home, log_path)
        running = _wait_for(home, log_path)
        action = "started"
    else:
        action = "already running"
    payload = {"action": action, "pid": running["pid"], "socket": client.socket_path(home)}
    emit(payload, lambda: click.echo(f"Daemon {action} (pid {running['pid']})."))


def _wait_for(home: str, log_path: Any) -> dict[str, Any]:
    deadline = time.monotonic() + _START_WAIT_S
    while time.monotonic() < deadline:
        reply = _ping(home)
        if reply is not None:
            return reply
        time.sleep(0.1)
    raise DaemonError(
        f"The daemon did not answer within {_START_WAIT_S:.0f} s; see {log_path} for why."
    )


@daemon.command()
@common_options
def stop() -> None:
    """Stop the daemon (the hooks then work in-process, more slowly)."""
    home = str(get_settings().home)
    reply = client.request(home, {"op": "stop"})
    if not reply or not reply.get("ok"):
        emit({"action": "not running"}, lambda: click.echo("No daemon is running."))
        return
    deadline = time.monotonic() + 10
    while _ping(home) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    emit(
        {"action": "stopped", "pid": reply["pid"]},
        lambda: click.echo(f"Daemon stopped (pid {reply['pid']})."),
    )


@daemon.command()
@common_options
def status() -> None:
    """Whether the daemon runs, its pid, uptime and memory."""
    home = str(get_settings().home)
    reply = _ping(home)
    if reply is None:
        emit({"running": False}, lambda: click.echo("Daemon: not running."))
        return
    rss_mb = _rss_mb(int(reply["pid"]))
    payload = {
        "running": True,
        "pid": reply["pid"],
        "uptime_s": round(float(reply["uptime_s"]), 1),
        "rss_mb": rss_mb,
        "socket": client.socket_path(home),
    }

    def human() -> None:
        memory = f", {rss_mb:.0f} MB resident" if rss_mb is not None else ""
        click.echo(f"Daemon: running (pid {reply['pid']}, up {payload['uptime_s']:.0f} s{memory}).")

    emit(payload, human)


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
    from contextd.cli.served import answer
    from contextd.daemon.forward import Command, code_stamp
    from contextd.daemon.server import serve
    from contextd.hooks.handlers import handle
    from contextd.hooks.reply import agent_reply, parse_payload

    stamp = code_stamp()  # of the code this process loads from now on
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    app = get_app()

    def hook(request: dict[str, Any]) -> dict[str, Any]:
        """A hook's raw request: the agent's payload in, the bytes to print out."""
        event = str(request.get("event"))
        payload = parse_payload(bytes(request.get("body", b"")))
        project = request.get("project")
        text = handle(app, event, payload, str(project) if project else None)
        return {"output": agent_reply(event, text, payload)}

    def command(request: dict[str, Any]) -> dict[str, Any]:
        """A client's `contextd search|recall`: its output, as it would have printed it."""
        command = request["command"]
        assert isinstance(command, Command)  # the server decoded it
        return {"output": answer(app, stamp, command)}

    serve(app, {"hook": hook, "cli": command})


COMMANDS = [daemon]
