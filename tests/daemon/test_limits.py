"""The daemon under slow and crowding clients, for real: a request must arrive whole within
its deadline (not per read), and a connection whose request is still arriving holds no
worker.

The slow senders run as the daemon's own user: another user cannot reach its socket at all
(tests/daemon/test_other_user.py); a wedged or buggy process of the owner can."""

import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import anyio

from contextd.daemon.intake import MAX_PENDING, REQUEST_DEADLINE_S
from contextd.daemon.server import WORKERS
from contextd.ipc import client, frames
from mcp import Client
from tests.daemon._support import Daemons
from tests.daemon.test_hosted import relay
from tests.mcp.test_server import payload

PING = frames.encode(b'{"kind": "ping"}' + b" " * 64)


class Dripper(threading.Thread):
    """Sends a ping one byte a second, as long as the daemon lets it; what came back."""

    def __init__(self, path: str) -> None:
        super().__init__(daemon=True)
        self.conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.conn.connect(path)
        self.conn.settimeout(1.0)  # the pace of the drip, well inside the old 5 s per read
        self.reply: bytes | None = None

    def run(self) -> None:
        with self.conn:
            for byte in PING:
                try:
                    self.conn.sendall(bytes([byte]))
                    self.reply = self.conn.recv(65536)
                    return
                except TimeoutError:
                    continue
                except OSError:
                    self.reply = b""
                    return


def _ping(home: Path) -> bool:
    return client.ask(str(home), {"kind": "ping"}, timeout=2.0) is not None


def _refusal(reply: bytes | None) -> str:
    assert reply is not None and reply[: len(frames.MAGIC)] == frames.MAGIC, reply
    head = json.loads(reply[frames.PREFIX_SIZE :])
    assert head["ok"] is False, head
    return str(head["error"])


def test_slow_senders_hold_no_worker_and_are_closed_at_the_deadline(
    daemons: Daemons, repo: Path, home: Path
) -> None:
    socket_path = daemons.start()["socket"]

    async def body(c: Client) -> Any:
        first = payload(await c.call_tool("session_info", {}))
        drippers = [Dripper(socket_path) for _ in range(WORKERS + 2)]
        for dripper in drippers:
            dripper.start()
        await anyio.sleep(0.5)
        answered = await anyio.to_thread.run_sync(_ping, home)
        busy = [d.reply for d in drippers]
        for dripper in drippers:
            await anyio.to_thread.run_sync(dripper.join, REQUEST_DEADLINE_S + 5)
        later = payload(await c.call_tool("session_info", {}))  # idle past the deadline
        return first, answered, busy, [d.reply for d in drippers], later

    (first, answered, busy, replies, later), loaded = relay(repo, body)
    assert answered, "a slow sender held up the owner's ping"
    assert busy == [None] * (WORKERS + 2)  # all still dripping while the ping was answered
    for reply in replies:
        assert _refusal(reply) == f"the request did not arrive within {REQUEST_DEADLINE_S:.0f} s"
    # The hosted session is not a request: it ran on past the deadline, in the daemon.
    assert later["session"]["id"] == first["session"]["id"] and "mcp" not in loaded


def test_connections_sending_nothing_cannot_crowd_out_the_owner(
    daemons: Daemons, repo: Path, home: Path
) -> None:
    socket_path = daemons.start()["socket"]
    silent = []
    try:
        for _ in range(MAX_PENDING + 8):
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.settimeout(REQUEST_DEADLINE_S + 5)
            conn.connect(socket_path)
            silent.append(conn)
        time.sleep(0.5)
        assert _ping(home), "connections that sent nothing held up the owner's ping"
        # The oldest were closed to make room (8, and one for the ping), with a word why;
        # the rest by the deadline.
        crowded = {_refusal(conn.recv(65536)) for conn in silent[:9]}
        assert crowded == {"too many requests arriving at once"}
        timed_out = {_refusal(conn.recv(65536)) for conn in silent[9:]}
        assert timed_out == {f"the request did not arrive within {REQUEST_DEADLINE_S:.0f} s"}
    finally:
        for conn in silent:
            conn.close()
