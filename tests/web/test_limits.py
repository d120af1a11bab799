"""The served view under a stranger's connections, for real: a second local user (without
the token; 127.0.0.1 is open to every user) holds half-sent requests against a real
`contextd ui` process, and the owner's page still loads; the held connections are closed by
their deadlines, and no more than the cap are ever open."""

import asyncio
import json
import os
import pwd
import socket
import subprocess
import textwrap
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from contextd.web.admission import BODY_S, HEADERS_S, MAX_CONNECTIONS, admitting
from tests.daemon.test_other_user import SYSTEM_PYTHON
from tests.web.served import Served, running_ui

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts fds in /proc")

# The stranger's side: open connections, each sending `first` and then a byte of `drip` a
# second; watch until the server has closed them all or `watch` seconds passed; say what
# happened to each kind. The standard library only.
HOLD = """
import json, select, socket, sys, time
port, kinds, watch = {port}, {kinds!r}, {watch}
open_ = {{}}
for label, (count, first, drip) in kinds.items():
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(first)
        s.setblocking(False)
        open_[s.fileno()] = (s, label, drip, time.monotonic())
print("held", len(open_), flush=True)
report = {{label: {{"closed": [], "left": 0, "answers": []}} for label in kinds}}
poll = select.poll()
for fd in open_:
    poll.register(fd, select.POLLIN)
end = time.monotonic() + watch
while open_ and time.monotonic() < end:
    for fd, _ in poll.poll(1000):
        s, label, drip, since = open_[fd]
        try:
            data = s.recv(65536)
        except OSError:
            data = b""
        if data:
            if data.startswith(b"HTTP/"):  # the start of an answer (not the rest of one)
                report[label]["answers"].append(data.split(b"\\r\\n")[0].decode())
            continue
        report[label]["closed"].append(time.monotonic() - since)
        poll.unregister(fd)
        del open_[fd]
        s.close()
    for fd, (s, label, drip, since) in list(open_.items()):
        if drip:
            try:
                s.send(drip)
            except OSError:
                pass
for s, label, drip, since in open_.values():
    report[label]["left"] += 1
print(json.dumps(report), flush=True)
"""


@contextmanager
def holding(
    who: pwd.struct_passwd, port: int, kinds: dict[str, tuple[int, bytes, bytes]], watch: float
) -> Iterator[subprocess.Popen[str]]:
    """The stranger's process, once it holds its connections."""
    assert SYSTEM_PYTHON is not None
    code = HOLD.format(port=port, kinds=kinds, watch=watch)
    process = subprocess.Popen(
        [SYSTEM_PYTHON, "-I", "-c", textwrap.dedent(code)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        user=who.pw_uid,
        group=who.pw_gid,
        extra_groups=[],
        env={"PATH": "/usr/bin:/bin"},
        cwd="/",
    )
    try:
        assert process.stdout is not None
        held = process.stdout.readline()
        assert held.startswith("held "), process.communicate(timeout=30)[1]
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(30)


def _report(process: subprocess.Popen[str], timeout: float) -> dict[str, Any]:
    out, err = process.communicate(timeout=timeout)
    report = json.loads(out)
    assert isinstance(report, dict), err
    return report


def _owners_page(served: Served) -> int:
    """The status of the owner's page, which must come within a few seconds."""
    port = served.base.rsplit(":", 1)[1]
    request = urllib.request.Request(
        served.base + "/", headers={"Cookie": f"contextd_ui_{port}={served.token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def _port(served: Served) -> int:
    return int(served.base.rsplit(":", 1)[1])


def _open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@pytest.mark.slow
def test_half_sent_requests_are_closed_by_their_deadlines_and_the_owner_is_answered(
    stranger: pwd.struct_passwd, repo: Path
) -> None:
    with running_ui(repo) as served:
        host = f"127.0.0.1:{_port(served)}".encode()
        kinds = {
            # A request line and a header, then a byte of a header line that never ends.
            "headers": (60, b"GET / HTTP/1.1\r\nHost: " + host + b"\r\n", b"X"),
            # Whole headers (refused at once: no token), then a body that never ends.
            "body": (
                60,
                b"POST / HTTP/1.1\r\nHost: " + host + b"\r\nContent-Length: 10000000\r\n\r\n",
                b"x" * 100,
            ),
        }
        with holding(stranger, _port(served), kinds, watch=BODY_S + 10) as process:
            assert _owners_page(served) == 200
            report = _report(process, timeout=BODY_S + 40)
    headers, body = report["headers"], report["body"]
    assert headers["left"] == 0 and body["left"] == 0, report
    assert len(headers["closed"]) == 60 and max(headers["closed"]) < BODY_S
    assert headers["answers"] == []
    assert len(body["closed"]) == 60 and min(body["closed"]) > HEADERS_S
    assert body["answers"] == ["HTTP/1.1 403 Forbidden"] * 60


def test_more_connections_than_the_cap_never_shut_the_owner_out(
    stranger: pwd.struct_passwd, repo: Path
) -> None:
    with running_ui(repo) as served:
        half = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        kinds = {"headers": (4 * MAX_CONNECTIONS, half, b"")}
        with holding(stranger, _port(served), kinds, watch=HEADERS_S + 10) as process:
            for _ in range(3):
                assert _owners_page(served) == 200
            opened = _open_files(served.process.pid)
            report = _report(process, timeout=HEADERS_S + 40)
    assert opened < MAX_CONNECTIONS + 40, f"{opened} files open"
    assert report["headers"]["left"] == 0, report


def test_a_body_past_the_cap_is_cut_off(stranger: pwd.struct_passwd, repo: Path) -> None:
    with running_ui(repo) as served:
        port = _port(served)
        head = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000000\r\n\r\n"
        code = f"""
        import socket
        s = socket.create_connection(("127.0.0.1", {port}), timeout=10)
        s.sendall({head!r})
        sent = 0
        try:
            while sent < 100_000_000:
                sent += s.send(b"x" * 65536)
        except OSError as exc:
            print(type(exc).__name__, sent)
        else:
            print("all", sent)
        """
        assert SYSTEM_PYTHON is not None
        flood = subprocess.run(
            [SYSTEM_PYTHON, "-I", "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            encoding="utf-8",
            user=stranger.pw_uid,
            group=stranger.pw_gid,
            extra_groups=[],
            env={"PATH": "/usr/bin:/bin"},
            cwd="/",
            timeout=60,
            check=False,
        )
        assert _owners_page(served) == 200
    outcome, sent = flood.stdout.split()
    assert outcome in ("ConnectionResetError", "BrokenPipeError"), flood.stdout + flood.stderr
    assert int(sent) < 20_000_000  # the cap, and what the socket buffers held


class _Blocked:
    """An ASGI app that answers only when released."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.waiting = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.waiting += 1
        await self.release.wait()
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def test_over_the_cap_with_every_connection_answered_a_newcomer_gets_503_at_once() -> None:
    app = _Blocked()
    config = uvicorn.Config(app, http=admitting(4), ws="none", lifespan="off", log_level="error")
    server = uvicorn.Server(config)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    port = listener.getsockname()[1]
    busy = []
    try:
        while not server.started:
            time.sleep(0.01)
        for _ in range(4):
            conn = socket.create_connection(("127.0.0.1", port), timeout=10)
            conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            busy.append(conn)
        while app.waiting < 4:
            time.sleep(0.01)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as late:
            answer = late.recv(65536)  # without reading a request
        assert answer.startswith(b"HTTP/1.1 503 Service Unavailable\r\n"), answer
        assert b"reload the page in a moment" in answer
        assert app.waiting == 4  # the four still wait for their answers
    finally:
        server.should_exit = True
        server.force_exit = True
        for conn in busy:
            conn.close()
        thread.join(10)
        listener.close()
