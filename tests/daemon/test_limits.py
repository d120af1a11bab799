"""The daemon under slow and crowding clients, for real: a request must arrive whole within
its deadline (not per read), a connection whose request is still arriving holds no worker,
and a request is a bounded piece of work.

The slow senders run as the daemon's own user: another user cannot reach its socket at all
(tests/daemon/test_other_user.py); a wedged or buggy process of the owner can."""

import json
import re
import socket
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from contextd.daemon.intake import MAX_PENDING, REQUEST_DEADLINE_S
from contextd.daemon.server import WORKERS
from contextd.limits import MAX_SEARCH_LIMIT
from contextd.models import Kind, MemoryBody, RecordDraft
from contextd.service.requests import MAX_PROJECT_DIRS, MAX_SUPERSEDES, decode_request
from contextd.wire import frames, to_daemon
from mcp import Client
from tests.conftest import DECISION, Cli
from tests.daemon._support import Daemons, exchange
from tests.daemon.test_hosted import relay
from tests.daemon.test_served import contextd
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
    return to_daemon.ask(str(home), {"kind": "ping"}, timeout=2.0) is not None


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


def _search(home: Path, repo: Path, **query: Any) -> dict[str, Any]:
    ask = {
        "kind": "search",
        "home": str(home),
        "stamp": to_daemon.code_stamp(),
        "project": None,
        "folder": str(repo),
        "query": {"text": "task queue", **query},
    }
    return exchange(home, frames.encode(json.dumps(ask).encode()))


def test_a_request_over_a_bound_is_refused_and_the_command_still_answers(
    daemons: Daemons, repo: Path, home: Path, run: Cli
) -> None:
    run.json(*DECISION)
    daemons.start()
    assert _search(home, repo)["ok"] is True
    long_query = "queue " * 400
    refused = _search(home, repo, text=long_query)
    assert refused["ok"] is False and "$.query.text" in refused["error"]
    assert _search(home, repo, tags=[f"t{n}" for n in range(5000)])["ok"] is False
    # The command, declined, answers in its own process: the same sentence as without a daemon.
    assert contextd(repo, "search", "task queue").warm
    declined = contextd(repo, "search", long_query, "--json")
    assert declined.code == 2 and not declined.warm
    assert "the limit is 2000" in json.loads(declined.stdout)["error"]["message"]


def _query_ask(**query: Any) -> bytes:
    ask = {"kind": "search", "home": "/h", "stamp": "s", "project": None, "folder": "/f"}
    return json.dumps({**ask, "query": {"text": "queue", **query}}).encode()


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"text": "q" * 2001}, "text"),
        ({"tags": ["t"] * 21}, "tags"),
        ({"tags": ["t" * 1025]}, "tags[0]"),
        ({"kinds": ["memory"] * 40}, "kinds"),
        ({"category": "c" * 1025}, "category"),
        ({"since": "1" * 1025}, "since"),
        ({"path": "p/" * 3000}, "path"),
        ({"limit": 0}, "limit"),
        ({"limit": MAX_SEARCH_LIMIT + 1}, "limit"),
    ],
)
def test_each_field_of_a_query_is_bounded(query: dict[str, Any], field: str) -> None:
    with pytest.raises(msgspec.ValidationError, match=re.escape(f"$.query.{field}`")):
        decode_request(_query_ask(**query))


def test_requests_at_their_bounds_are_taken_and_one_past_them_refused() -> None:
    at = {"text": "q" * 2000, "tags": ["t" * 1024] * 20, "limit": MAX_SEARCH_LIMIT}
    assert decode_request(_query_ask(**at)).query.limit == MAX_SEARCH_LIMIT  # type: ignore[union-attr]
    base = {"home": "/h", "stamp": "s", "project": None, "folder": "/f"}
    hook = {"kind": "hook", "event": "prompt", **base}
    decode_request(json.dumps({**hook, "project_dirs": ["/d"] * MAX_PROJECT_DIRS}).encode())
    with pytest.raises(msgspec.ValidationError, match="project_dirs"):
        decode_request(json.dumps({**hook, "project_dirs": ["/d"] * 17}).encode())
    draft = msgspec.to_builtins(RecordDraft(Kind.MEMORY, "A note", MemoryBody()))
    write = {"kind": "write", "draft": draft, **base}
    decode_request(json.dumps({**write, "supersedes": ["x"] * MAX_SUPERSEDES}).encode())
    with pytest.raises(msgspec.ValidationError, match="supersedes"):
        decode_request(json.dumps({**write, "supersedes": ["x"] * (MAX_SUPERSEDES + 1)}).encode())
