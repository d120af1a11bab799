"""`contextd mcp serve` hosted by a running daemon: real daemon processes, real relay
processes spoken to by the SDK's stdio client (or line by line, where the timing matters).
The relay never imports the SDK; the session works in the relay's place, not the daemon's;
and when the daemon goes away mid-session the agent's server carries on."""

import json
import os
import select
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.types import Implementation

from contextd.app import open_app
from contextd.client.relay import LOST
from contextd.config import load_settings
from contextd.daemon.hosting import MAX_HOSTED
from contextd.storage.sessions import SessionRow
from contextd.wire import to_daemon
from mcp import Client, StdioServerParameters
from tests.conftest import make_repo
from tests.daemon._support import Daemons, wait_gone
from tests.daemon.test_served import CLIENT
from tests.hooks._support import hook_env
from tests.mcp.test_server import READ_TOOLS, WRITE_TOOLS, payload

Body = Callable[[Client], Awaitable[Any]]
SDK = ("mcp", "pydantic", "pydantic_core", "anyio", "click", "contextd.app", "numpy")


def relay(
    folder: Path, body: Body, *extra: str, env: dict[str, str] | None = None, name: str = "agent"
) -> tuple[Any, frozenset[str]]:
    """Run `contextd mcp serve EXTRA` in `folder` as an agent does, `body` against it; what
    `body` returned and the modules the server's process imported."""
    modules = folder.parent / f"modules-{uuid.uuid4().hex}"

    async def main() -> Any:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-c", CLIENT, "mcp", "serve", *extra],
            env={**(env or hook_env()), "CONTEXTD_TEST_MODULES": str(modules)},
            cwd=str(folder),
        )
        with anyio.fail_after(60):
            async with Client(params, client_info=Implementation(name=name, version="1")) as c:
                return await body(c)

    answer = anyio.run(main)
    loaded = frozenset(modules.read_text(encoding="utf-8").split("\n"))
    modules.unlink()
    return answer, loaded


def sessions(repo: Path) -> list[SessionRow]:
    with open_app(load_settings(cwd=repo)) as app:
        return app.sessions.list_sessions(app.project(None, repo))


def attach(folder: Path) -> Path:
    make_repo(folder)
    done = subprocess.run(
        [sys.executable, "-m", "contextd", "attach"], cwd=folder, env=hook_env(), check=False
    )
    assert done.returncode == 0
    return folder


def test_the_daemon_hosts_the_session_and_the_relay_imports_no_sdk(
    daemons: Daemons, repo: Path
) -> None:
    daemons.start()

    async def body(c: Client) -> Any:
        tools = {t.name for t in (await c.list_tools()).tools}
        stored = payload(
            await c.call_tool(
                "remember",
                {"text": "Deploys run from the release branch only", "category": "convention"},
            )
        )
        found = payload(await c.call_tool("get_context", {"query": "how do deploys run"}))
        brief = payload(await c.call_tool("get_project_summary", {}))
        read = payload(await c.call_tool("get_entry", {"id": stored["id"]}))
        info = payload(await c.call_tool("session_info", {}))
        return tools, stored, found, brief, read, info

    (tools, stored, found, brief, read, info), loaded = relay(repo, body)
    assert tools >= READ_TOOLS | WRITE_TOOLS
    assert "release branch" in found["context"] and stored["id"] in found["context"]
    assert "release branch" in json.dumps(brief) and read["id"] == stored["id"]
    assert info["project_from"] == f"the server's folder {repo}"
    assert not set(SDK) & loaded, set(SDK) & loaded
    # The contextd session was named after the client and ended with the relay.
    (row,) = sessions(repo)
    assert row.agent == "agent" and row.id == info["session"]["id"]
    assert row.ended_at is not None


def test_the_session_works_where_the_relay_runs_not_where_the_daemon_does(
    daemons: Daemons, repo: Path, tmp_path: Path
) -> None:
    other = attach(tmp_path / "other")
    daemons.start()  # in `repo`

    async def where(c: Client) -> Any:
        return payload(await c.call_tool("session_info", {}))

    here, _ = relay(other, where)
    assert here["project"] == "other" and here["project_from"] == f"the server's folder {other}"
    named, _ = relay(repo, where, "--project", "other")
    assert named["project"] == "other" and named["project_from"] == "--project / $CONTEXTD_PROJECT"
    by_agent, loaded = relay(repo, where, env=hook_env(CLAUDE_PROJECT_DIR=str(other)))
    assert by_agent["project_from"] == f"the agent's project folder {other}"
    assert "mcp" not in loaded  # hosted, all three

    async def tools(c: Client) -> Any:
        return {t.name for t in (await c.list_tools()).tools}

    offered, loaded = relay(repo, tools, "--read-only")
    assert offered == READ_TOOLS and "mcp" not in loaded


def test_two_relays_get_two_sessions_each_ended_with_its_relay(
    daemons: Daemons, repo: Path
) -> None:
    daemons.start()
    ids: dict[str, str] = {}

    async def both() -> None:
        async def one(name: str, release: anyio.Event, other: anyio.Event) -> None:
            async def body(c: Client) -> None:
                ids[name] = payload(await c.call_tool("session_info", {}))["session"]["id"]
                release.set()
                await other.wait()  # both connected at once

            params = StdioServerParameters(
                command=sys.executable,
                args=["-m", "contextd", "mcp", "serve"],
                env=hook_env(),
                cwd=str(repo),
            )
            async with Client(params, client_info=Implementation(name=name, version="1")) as c:
                await body(c)

        first, second = anyio.Event(), anyio.Event()
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(one, "left", first, second)
                group.start_soon(one, "right", second, first)

    anyio.run(both)
    rows = {row.agent: row for row in sessions(repo)}
    assert set(rows) == {"left", "right"} and ids["left"] != ids["right"]
    assert {rows[name].id for name in rows} == set(ids.values())
    assert all(row.ended_at is not None for row in rows.values())


def test_the_agents_server_outlives_a_daemon_stopped_mid_session(
    daemons: Daemons, repo: Path
) -> None:
    daemons.start()

    async def body(c: Client) -> Any:
        before = payload(await c.call_tool("session_info", {}))
        stopped = subprocess.run(
            [sys.executable, "-m", "contextd", "daemon", "stop"],
            cwd=repo,
            env=hook_env(),
            capture_output=True,
            check=True,
        )
        assert b"stopped" in stopped.stdout
        stored = payload(
            await c.call_tool(
                "remember", {"text": "Staging mirrors production", "category": "note"}
            )
        )
        after = payload(await c.call_tool("session_info", {}))
        return before, stored, after

    (before, stored, after), loaded = relay(repo, body)
    assert "mcp" not in loaded  # this process relayed throughout; its child served
    assert stored["title"].startswith("Staging")
    rows = {row.id: row for row in sessions(repo)}
    # The hosted session ended with its daemon; the in-process one, named alike, with the end.
    assert rows[before["session"]["id"]].ended_at is not None
    assert rows[after["session"]["id"]].agent == "agent"
    assert all(row.ended_at is not None for row in rows.values())


class Lines:
    """`contextd mcp serve` spoken to line by line."""

    def __init__(self, repo: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "contextd", "mcp", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=repo,
            env=hook_env(),
        )
        self._buffer = b""

    def send(self, message: dict[str, Any]) -> None:
        self.send_line(json.dumps(message).encode())

    def send_line(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def call(self, ident: int, tool: str, arguments: dict[str, Any]) -> None:
        params = {"name": tool, "arguments": arguments}
        self.send({"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params})

    def receive(self, seconds: float = 30) -> dict[str, Any]:
        assert self.process.stdout is not None
        deadline = time.monotonic() + seconds
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            assert left > 0, "no answer in time"
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 65536)
                assert chunk, "the server closed its output"
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        decoded = json.loads(line)
        assert isinstance(decoded, dict)
        return decoded

    def handshake(self) -> dict[str, Any]:
        params = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "lines", "version": "1"},
        }
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        answer = self.receive()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def close(self) -> tuple[int, bytes]:
        assert self.process.stdin is not None
        self.process.stdin.close()
        code = self.process.wait(30)
        assert self.process.stderr is not None and self.process.stdout is not None
        errors = self.process.stderr.read()
        self.process.stderr.close()
        self.process.stdout.close()
        return code, errors


def test_calls_in_flight_when_the_daemon_dies_are_sent_again_unless_they_may_write(
    daemons: Daemons, repo: Path
) -> None:
    """A read-only call (as tools/list marked it) is sent to the next server and answered
    there; a write, which the dead daemon may or may not have stored, gets an error saying so,
    and is not sent twice."""
    pid = int(daemons.start()["pid"])
    lines = Lines(repo)
    try:
        assert lines.handshake()["result"]["serverInfo"]["name"] == "contextd"
        lines.send({"jsonrpc": "2.0", "id": 10, "method": "tools/list"})
        assert lines.receive()["id"] == 10
        lines.call(1, "session_info", {})
        assert lines.receive()["id"] == 1
        os.kill(pid, signal.SIGSTOP)  # the calls below reach a daemon that cannot answer
        lines.call(2, "get_context", {"query": "deploys"})
        note = {"text": "Deploys wait for the nightly backup to finish", "category": "gotcha"}
        lines.call(4, "remember", note)
        time.sleep(0.3)
        os.kill(pid, signal.SIGKILL)
        assert wait_gone(pid, 10)
        answers = {answer["id"]: answer for answer in (lines.receive(), lines.receive())}
        assert answers[4]["error"]["message"] == LOST
        assert "results" in payload_of(answers[2])  # answered by the next server
        lines.call(3, "session_info", {})
        served = lines.receive()  # not the answer to the replayed initialize: the client had it
        assert served["id"] == 3, served
        assert payload_of(served)["session"]["agent"] == "lines"
    finally:
        code, errors = lines.close()
    assert code == 0 and b"Traceback" not in errors


NO_MESSAGE = [  # a line, and the error code and id of JSON-RPC's answer to it
    (b"this is not json", -32700, None),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": ', -32700, None),
    (b'{"jsonrpc": "2.0", "id": "x"}', -32600, "x"),
    (b"[1, 2]", -32600, None),
    (b'{"jsonrpc": "2.0", "id": {"no": "id"}, "method": 7}', -32600, None),
]


@pytest.mark.parametrize("hosted", [True, False], ids=["hosted by the daemon", "in-process"])
def test_a_line_that_is_no_message_gets_json_rpcs_error_and_the_server_goes_on(
    daemons: Daemons, repo: Path, hosted: bool
) -> None:
    if hosted:
        daemons.start()
    lines = Lines(repo)
    try:
        lines.handshake()
        for line, code, ident in NO_MESSAGE:
            lines.send_line(line)
            answer = lines.receive()
            assert (answer["jsonrpc"], answer["id"], answer["error"]["code"]) == (
                "2.0",
                ident,
                code,
            )
            kind = "Parse error" if code == -32700 else "Invalid Request"
            assert answer["error"]["message"].startswith(kind), answer
        lines.send_line(b"")  # a blank line is no message either, and gets no answer
        lines.call(1, "session_info", {})
        served = lines.receive()
        assert served["id"] == 1 and payload_of(served)["session"]["agent"] == "lines"
        mapped = Path(f"/proc/{lines.process.pid}/maps").read_text(encoding="utf-8")
        assert ("pydantic_core" in mapped) is not hosted  # the SDK runs where the server does
    finally:
        code, errors = lines.close()
    assert code == 0 and b"Traceback" not in errors


def payload_of(answer: dict[str, Any]) -> Any:
    result = answer["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]


def test_the_relay_ends_when_its_client_does_and_the_session_with_it(
    daemons: Daemons, repo: Path
) -> None:
    daemons.start()
    lines = Lines(repo)
    lines.handshake()
    lines.call(1, "session_info", {})
    session = payload_of(lines.receive())["session"]["id"]
    started = time.monotonic()
    code, errors = lines.close()
    assert code == 0 and errors == b"" and time.monotonic() - started < 5
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        (row,) = sessions(repo)
        if row.ended_at is not None:
            break
        time.sleep(0.05)
    assert row.id == session and row.ended_at is not None


def mcp_ask(at: Path, repo: Path, **changes: object) -> dict[str, object]:
    return {
        "kind": "mcp",
        "home": str(at),
        "stamp": to_daemon.code_stamp(),
        "project": None,
        "folder": str(repo),
        "project_dirs": [],
        "read_only": False,
        **changes,
    }


def test_the_daemon_hosts_only_what_it_may_and_as_many_as_it_may(
    daemons: Daemons, repo: Path, home: Path, tmp_path: Path
) -> None:
    daemons.start()
    for refused in (
        mcp_ask(home, repo, home=str(tmp_path)),
        mcp_ask(home, repo, env={"CONTEXTD_HOME": "/x"}),
        mcp_ask(home, repo, argv=["mcp", "serve"]),
    ):
        assert to_daemon.open_session(str(home), refused) is None, refused
    held = [to_daemon.open_session(str(home), mcp_ask(home, repo)) for _ in range(MAX_HOSTED)]
    try:
        assert all(conn is not None for conn in held)
        assert to_daemon.open_session(str(home), mcp_ask(home, repo)) is None
        # The hooks and searches are still answered: sessions hold no worker of the pool.
        assert to_daemon.ask(str(home), {"kind": "ping"}) is not None
        held.pop().close()  # type: ignore[union-attr]
        deadline, again = time.monotonic() + 10, None
        while again is None and time.monotonic() < deadline:
            again = to_daemon.open_session(str(home), mcp_ask(home, repo))
            time.sleep(0.05)
        assert again is not None
        held.append(again)
    finally:
        for conn in held:
            if conn is not None:
                conn.close()
    log = (home / "daemon.log").read_text(encoding="utf-8")
    assert "as many MCP sessions" in log


@pytest.mark.parametrize("variable", ["CONTEXTD_DEBUG", "CONTEXTD_MCP_IN_PROCESS"])
def test_the_in_process_server_is_kept_when_asked_for(
    daemons: Daemons, repo: Path, variable: str
) -> None:
    daemons.start()

    async def body(c: Client) -> Any:
        return payload(await c.call_tool("session_info", {}))

    info, loaded = relay(repo, body, env=hook_env(**{variable: "1"}))
    assert "mcp" in loaded and info["project"] == "orbit"


def test_a_daemon_of_other_code_leaves_the_server_in_process(
    daemons: Daemons, repo: Path, tmp_path: Path, home: Path
) -> None:
    import shutil

    import contextd as contextd_package

    older = tmp_path / "older"
    package = Path(contextd_package.__file__).parent
    shutil.copytree(package, older / "contextd", ignore=shutil.ignore_patterns("__pycache__"))
    daemons.start(env=hook_env(PYTHONPATH=str(older)))

    async def body(c: Client) -> Any:
        return payload(await c.call_tool("session_info", {}))

    info, loaded = relay(repo, body)
    assert "mcp" in loaded and info["project"] == "orbit"
    assert "other contextd code" in (home / "daemon.log").read_text(encoding="utf-8")


def test_help_and_unknown_options_are_clicks(daemons: Daemons, repo: Path) -> None:
    daemons.start()
    run = [sys.executable, "-m", "contextd", "mcp", "serve"]
    helped = subprocess.run(
        [*run, "--help"], cwd=repo, env=hook_env(), capture_output=True, check=False
    )
    assert helped.returncode == 0 and b"--read-only" in helped.stdout
    wrong = subprocess.run(
        [*run, "--read-onyl"], cwd=repo, env=hook_env(), capture_output=True, check=False
    )
    assert wrong.returncode == 2 and b"No such option" in wrong.stderr


@pytest.mark.parametrize(
    ("argv", "values"),
    [
        (["mcp", "serve"], {"read_only": False, "home": None, "project": None}),
        (["--home", "/h", "mcp", "serve", "--read-only"], {"read_only": True, "home": "/h"}),
        (["mcp", "serve", "--project", "p", "--home=/x"], {"project": "p", "home": "/x"}),
    ],
)
def test_the_relay_reads_serves_options_as_click_does(
    argv: list[str], values: dict[str, object]
) -> None:
    from contextd.client.options import parse
    from contextd.client.relay import SERVE_OPTIONS

    parsed = parse(argv, {"mcp serve": SERVE_OPTIONS}, arguments=0)
    assert parsed is not None and parsed.command == "mcp serve"
    assert values.items() <= parsed.values.items()


@pytest.mark.parametrize(
    "argv",
    [
        ["mcp", "serve", "--help"],
        ["mcp", "--read-only", "serve"],
        ["mcp", "serve", "extra"],
        ["mcp", "serve", "--read-only=1"],
        ["mcp"],
        ["serve", "mcp"],
    ],
)
def test_what_the_relay_leaves_to_click(argv: list[str]) -> None:
    from contextd.client.options import parse
    from contextd.client.relay import SERVE_OPTIONS

    assert parse(argv, {"mcp serve": SERVE_OPTIONS}, arguments=0) is None


def test_the_relays_option_table_is_serves() -> None:
    import click

    from contextd.cli.mcp_command import serve
    from contextd.client.options import COMMON
    from contextd.client.relay import SERVE_OPTIONS

    declared = {option.flag for option in (*COMMON, *SERVE_OPTIONS)}
    options = {opt for p in serve.params if isinstance(p, click.Option) for opt in p.opts}
    assert options - {"-h", "--help"} == declared


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError):
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def test_the_relay_hands_the_session_back_to_a_daemon_that_returns(
    daemons: Daemons, repo: Path
) -> None:
    """After a fallback to its child, the relay gives the session back to a daemon once one
    hosts it again and the session is idle: the child (its own model) exits."""
    if not Path("/proc/self/stat").is_file():
        pytest.skip("finding a process's children needs Linux's /proc")
    daemons.start()
    lines = Lines(repo)
    try:
        lines.handshake()
        daemons.contextd("daemon", "stop")
        lines.call(1, "session_info", {})
        assert payload_of(lines.receive())["session"]["agent"] == "lines"
        assert _children(lines.process.pid)  # the child serves
        daemons.start()
        deadline = time.monotonic() + 30
        while _children(lines.process.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _children(lines.process.pid), "the relay kept its child"
        lines.call(2, "get_context", {"query": "deploys"})
        served = lines.receive()  # not the answer to the replayed initialize
        assert served["id"] == 2 and "results" in payload_of(served)
    finally:
        code, errors = lines.close()
    assert code == 0 and b"Traceback" not in errors
