"""The MCP tools as an agent meets them, spoken to in memory by the SDK's own client; and
`contextd mcp serve` as a real subprocess for what needs one: a stdio smoke test, the
--read-only flag, eight processes on one store, and a raw line the SDK client cannot send."""

import json
import os
import select
import sqlite3
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.types import Implementation, ListRootsResult, Root

from contextd.app import App, open_app
from contextd.config import load_settings
from contextd.mcp.server import build_server
from mcp import Client, StdioServerParameters
from tests.conftest import DECISION, Cli

READ_TOOLS = {
    "get_project_summary",
    "get_context",
    "search",
    "get_entry",
    "prune_stale",
    "verify_quality",
    "session_info",
    "get_compaction_report",
}
WRITE_TOOLS = {
    "remember",
    "record_decision",
    "record_constraint",
    "record_pipeline",
    "checkpoint",
    "update_entry",
    "supersede",
    "archive",
    "verify_entry",
    "end_session",
    "learn",
    "append",
    "link",
}
DESTRUCTIVE_TOOLS = {"delete"}
NATS_PROBLEM = "Redis pub/sub dropped tasks whenever workers reconnected mid-deploy"
PG_PROBLEM = "We want a durable task queue without one more service in production"
PG_WHY = "Postgres is already deployed and SKIP LOCKED gives safe dequeue inside transactions"

Body = Callable[[Client], Awaitable[None]]


def serve(repo: Path, body: Body, *extra: str) -> None:
    """Spawn `contextd mcp serve` in `repo` and run `body` against it, as the client
    'test-agent'."""

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "contextd", "mcp", "serve", *extra],
            env=dict(os.environ),
            cwd=str(repo),
        )
        with anyio.fail_after(60):
            async with Client(
                params, client_info=Implementation(name="test-agent", version="1.0")
            ) as client:
                await body(client)

    anyio.run(main)


def talk(app: App, body: Body, *, roots: list[Path] | None = None) -> None:
    """Run `body` against a server over `app` in this process, as the client 'test-agent';
    the connection (and its session) ends when `body` returns.

    With `roots`, the client speaks the handshake-era protocol (as today's agents do): the
    2026-07-28 protocol has no server-to-client requests, so no roots.
    """

    async def list_roots(_context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=r.as_uri()) for r in roots or ()])

    async def main() -> None:
        with anyio.fail_after(60):
            async with Client(
                build_server(app),
                client_info=Implementation(name="test-agent", version="1.0"),
                list_roots_callback=list_roots if roots is not None else None,
                mode="auto" if roots is None else "legacy",
            ) as client:
                await body(client)

    anyio.run(main)


@contextmanager
def app_in(folder: Path) -> Iterator[App]:
    """The app a server started in `folder` would open."""
    with open_app(load_settings(cwd=folder)) as opened:
        yield opened


def payload(result: Any) -> Any:
    """The structured result (the text beside it is for the model to read)."""
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None
    return result.structured_content


# The real process: stdio, the --read-only flag, many processes, raw lines.


def test_the_stdio_server_lists_its_tools_stores_finds_and_briefs(repo: Path) -> None:
    async def body(client: Client) -> None:
        tools = (await client.list_tools()).tools
        assert {t.name for t in tools} == READ_TOOLS | WRITE_TOOLS | DESTRUCTIVE_TOOLS
        assert all(t.output_schema is not None for t in tools)
        memory = payload(
            await client.call_tool(
                "remember",
                {
                    "text": "Deploys run from the release branch only",
                    "category": "convention",
                    "tags": ["deploy"],
                },
            )
        )
        assert memory["origin"] == "agent" and memory["similar"] == []
        decision = payload(
            await client.call_tool(
                "record_decision",
                {
                    "summary": "Use NATS JetStream for the task queue",
                    "problem": NATS_PROBLEM,
                    "why_chosen": "JetStream keeps durable consumers with acks, so a worker that "
                    "reconnects resumes where it stopped",
                },
            )
        )
        context = payload(await client.call_tool("get_context", {"query": "task queue"}))
        assert context["results"][0]["id"] == decision["id"]
        assert decision["id"] in context["context"]
        summary = await client.call_tool("get_project_summary", {})
        assert "Deploys run from the release branch only" in summary.content[0].text
        entry = payload(await client.call_tool("get_entry", {"id": decision["id"][:13]}))
        assert entry["body"]["problem"].startswith("Redis")
        newer = payload(
            await client.call_tool(
                "record_decision",
                {
                    "summary": "Use PostgreSQL SKIP LOCKED for the task queue",
                    "problem": PG_PROBLEM,
                    "why_chosen": PG_WHY,
                    "supersedes": [decision["id"]],
                },
            )
        )
        found = payload(await client.call_tool("search", {"query": "task queue"}))
        assert [r["id"] for r in found["results"]] == [newer["id"]]
        history = payload(
            await client.call_tool("search", {"query": "task queue", "include_superseded": True})
        )
        assert history["results"][1]["label"] == "NOT CURRENT"

    serve(repo, body)


def test_read_only_mode_offers_only_the_read_tools(repo: Path) -> None:
    async def body(client: Client) -> None:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names == READ_TOOLS
        told = client.instructions or ""
        assert "get_context" in told and "read-only" in told
        assert "checkpoint" not in told and "Record a decision" not in told  # tools it lacks

    serve(repo, body, "--read-only")


def test_eight_connections_at_once_make_eight_sessions(repo: Path, home: Path) -> None:
    """Each connection opens one session even when its first tool calls race each other, and
    a session closed by the next one to open never ends before it started."""

    async def connection(number: int) -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "contextd", "mcp", "serve"],
            env=dict(os.environ),
            cwd=str(repo),
        )
        async with (
            Client(
                params, client_info=Implementation(name=f"agent-{number}", version="1")
            ) as client,
            anyio.create_task_group() as calls,
        ):
            for _ in range(3):
                calls.start_soon(client.call_tool, "session_info", {})

    async def main() -> None:
        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:
                for number in range(8):
                    group.start_soon(connection, number)

    anyio.run(main)
    with sqlite3.connect(home / "contextd.db") as conn:
        rows = conn.execute("SELECT agent, started_at, ended_at FROM sessions").fetchall()
    conn.close()
    assert sorted(r[0] for r in rows) == [f"agent-{n}" for n in range(8)]
    assert all(ended is not None and ended >= started for _, started, ended in rows), rows


def test_a_call_holding_a_lone_surrogate_gets_an_error_result(repo: Path) -> None:
    """The SDK client cannot even send one, so the protocol is spoken by hand here: a line
    with an escaped half of a surrogate pair must be answered, and the server must go on."""
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    raw = [json.dumps(line) for line in lines] + [
        '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", '
        '"arguments": {"query": "queue \\ud800 workers"}}}',
        '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "remember", '
        '"arguments": {"text": "The queue \\udc80 workers drain first", "category": "gotcha"}}}',
        json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
    ]
    answers: dict[int, Any] = {}
    with subprocess.Popen(
        [sys.executable, "-m", "contextd", "mcp", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=repo,
        env=dict(os.environ),
    ) as server:
        assert server.stdin is not None and server.stdout is not None
        try:
            for line in raw:  # one at a time: each answered before the next is sent
                server.stdin.write(line.encode() + b"\n")
                server.stdin.flush()
                if '"id"' in line:
                    ready, _, _ = select.select([server.stdout], [], [], 30)
                    assert ready, f"no answer to {line}"  # the agent would wait forever
                    message = json.loads(server.stdout.readline())
                    answers[message["id"]] = message
        finally:
            server.stdin.close()
            server.wait(timeout=30)
    assert set(answers) == {1, 2, 3, 4}
    for call in (2, 3):
        result = answers[call]["result"]
        assert result["isError"] is True and "not text" in result["content"][0]["text"]
    assert answers[4]["result"]["tools"]


# In memory: everything else a tool does.


def test_the_tool_surface_and_its_hints_are_pinned(app: App) -> None:
    async def body(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == READ_TOOLS | WRITE_TOOLS | DESTRUCTIVE_TOOLS
        for name, spec in tools.items():
            assert spec.description, name
            assert spec.annotations is not None
            assert spec.annotations.read_only_hint is (name in READ_TOOLS), name
            assert spec.annotations.destructive_hint is (name in DESTRUCTIVE_TOOLS), name
        decision = tools["record_decision"].input_schema
        assert set(decision["required"]) == {"summary", "problem", "why_chosen"}
        assert "why_chosen" in decision["properties"]
        assert "60+ characters" in decision["properties"]["why_chosen"]["description"]
        undescribed = [
            f"{name}.{param}"
            for name, spec in tools.items()
            for param, schema in spec.input_schema.get("properties", {}).items()
            if not _described(schema)
        ]
        assert undescribed == []
        for name in ("remember", "record_decision", "record_constraint", "record_pipeline"):
            assert tools[name].input_schema["properties"]["origin"]["default"] == "agent"
        context = tools["get_context"].input_schema["properties"]
        for param in ("kind", "category", "tags", "since", "before", "include_archived", "mmr"):
            assert param in context, param
        for param in ("path", "project", "dates_by", "include_superseded", "budget"):
            assert param in context, param
        assert client.server_info is not None and client.server_info.version not in ("", None)
        told = client.instructions or ""
        assert "Record a decision" in told and "<project-memory>" in told

    talk(app, body)


def test_the_tool_list_says_each_thing_once(app: App) -> None:
    """What every session reads into its context: no pydantic titles, an optional argument
    without a null alternative, a description without its docstring's indentation; an
    explicit null is still taken, and results keep the nulls they may carry."""

    async def body(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name, tool in tools.items():
            assert "title" not in _keys_of(tool.input_schema), name
            assert "title" not in _keys_of(tool.output_schema), name
            assert "  " not in (tool.description or ""), name
            for param, schema in tool.input_schema["properties"].items():
                assert "anyOf" not in schema and schema.get("type") != "null", (name, param)
        tags = tools["remember"].input_schema["properties"]["tags"]
        assert tags["type"] == "array" and "default" not in tags and tags["description"]
        assert "title" in tools["update_entry"].input_schema["properties"]  # a name, kept
        superseded_by = tools["get_entry"].output_schema["properties"]["superseded_by"]
        assert {"type": "null"} in superseded_by["anyOf"]
        stored = await client.call_tool(
            "remember",
            {
                "text": "Deploys run from the release branch only",
                "category": "convention",
                "tags": None,
                "related_to": None,
            },
        )
        assert payload(stored)["tags"] == []

    talk(app, body)


def _keys_of(schema: Any) -> set[str]:
    """Every key of a schema's objects, except the names of its properties and definitions."""
    if isinstance(schema, list):
        return set().union(*map(_keys_of, schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    keys = set(schema)
    for key, value in schema.items():
        if key in ("properties", "$defs"):
            keys |= set().union(set(), *(_keys_of(v) for v in value.values()))
        elif key not in ("default", "enum", "const", "required"):
            keys |= _keys_of(value)
    return keys


def _described(schema: dict[str, Any]) -> bool:
    """A parameter's description, on the property itself or on the one choice of an anyOf."""
    if schema.get("description"):
        return True
    return any(_described(choice) for choice in schema.get("anyOf", []) if "$ref" not in choice)


def test_bad_input_comes_back_as_a_readable_tool_error(app: App) -> None:
    async def body(client: Client) -> None:
        thin = await client.call_tool(
            "record_decision",
            {"summary": "Use NATS for the queue", "problem": "too short", "why_chosen": "x"},
        )
        assert thin.is_error and "at least 40" in thin.content[0].text
        missing = await client.call_tool("get_entry", {"id": "0123456789ab"})
        assert missing.is_error and "No record with id" in missing.content[0].text
        secret = await client.call_tool(
            "remember",
            {"text": "CI pushes with token ghp_" + "a1B2c3D4e5" * 4, "category": "gotcha"},
        )
        assert secret.is_error and "GitHub token" in secret.content[0].text
        assert "a1B2c3D4e5" not in secret.content[0].text
        wrong_type = await client.call_tool("search", {"query": "x", "limit": 999})
        assert wrong_type.is_error
        # The server is still alive and answering after all of that.
        assert payload(await client.call_tool("prune_stale", {}))["records"] == []

    talk(app, body)


def test_a_record_written_by_the_cli_while_the_server_runs_is_visible(app: App, run: Cli) -> None:
    async def body(client: Client) -> None:
        assert payload(await client.call_tool("search", {"query": "task queue"}))["results"] == []
        written = run.json(*DECISION)  # its own app: another connection to the store
        found = payload(await client.call_tool("search", {"query": "task queue"}))
        assert [r["id"] for r in found["results"]] == [written["id"]]

    talk(app, body)


def test_outside_a_project_every_project_tool_says_how_to_attach(tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()

    async def body(client: Client) -> None:
        result = await client.call_tool("get_context", {"query": "anything at all"})
        assert result.is_error and "contextd attach" in result.content[0].text

    with app_in(loose) as app:
        talk(app, body)


@pytest.mark.parametrize("tool", sorted((WRITE_TOOLS | DESTRUCTIVE_TOOLS) - {"end_session"}))
def test_write_tools_refuse_an_unknown_id_or_missing_field(app: App, tool: str) -> None:
    async def body(client: Client) -> None:
        result = await client.call_tool(tool, {"id": "0123456789ab"})
        assert result.is_error

    talk(app, body)


def test_a_connection_is_a_session_named_after_the_client(app: App, home: Path) -> None:
    seen: list[str] = []

    async def body(client: Client) -> None:
        info = payload(await client.call_tool("session_info", {}))
        assert info["this_connection"] is True
        assert info["session"]["agent"] == "test-agent" and info["session"]["ended_at"] is None
        seen.append(info["session"]["id"])

    talk(app, body)
    talk(app, body)
    with sqlite3.connect(home / "contextd.db") as conn:
        rows = conn.execute(
            "SELECT id, agent, ended_at FROM sessions ORDER BY started_at"
        ).fetchall()
    conn.close()
    assert [r[0] for r in rows] == seen
    assert all(r[1] == "test-agent" and r[2] is not None for r in rows)  # closed on disconnect


def test_end_session_keeps_a_summary(app: App) -> None:
    async def body(client: Client) -> None:
        ended = payload(await client.call_tool("end_session", {"summary": "wired the heartbeat"}))
        assert ended["summary"] == "wired the heartbeat" and ended["ended_at"]

    talk(app, body)


def test_results_carry_readable_text_beside_the_structured_view(app: App, run: Cli) -> None:
    written = run.json(*DECISION)

    async def body(client: Client) -> None:
        context = await client.call_tool("get_context", {"query": "task queue"})
        assert context.content[0].text == payload(context)["context"]
        assert written["id"] in context.content[0].text
        found = await client.call_tool("search", {"query": "task queue"})
        assert f"\n1. [decision {written['id']}]" in found.content[0].text
        entry = await client.call_tool("get_entry", {"id": written["id"]})
        assert "why_chosen:" in entry.content[0].text
        assert not entry.content[0].text.lstrip().startswith("{")

    talk(app, body)


def test_archive_keeps_the_reason_it_was_given(app: App, run: Cli) -> None:
    written = run.json(*DECISION)

    async def body(client: Client) -> None:
        reason = "We moved the queue to NATS in the November rewrite"
        archived = payload(
            await client.call_tool("archive", {"id": written["id"], "reason": reason})
        )
        assert archived["status"] == "archived" and archived["archived_reason"] == reason
        entry = await client.call_tool("get_entry", {"id": written["id"]})
        assert f"Archived because: {reason}" in entry.content[0].text

    talk(app, body)
    restored = run.json("unarchive", written["id"])
    assert "archived_reason" not in restored


def test_the_clients_roots_choose_the_project(repo: Path, tmp_path: Path, run: Cli) -> None:
    written = run.json(*DECISION)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    async def body(client: Client) -> None:
        found = payload(await client.call_tool("search", {"query": "task queue"}))
        assert [r["id"] for r in found["results"]] == [written["id"]]
        info = payload(await client.call_tool("session_info", {}))
        assert info["this_connection"] is True

    # The server runs outside any project; only the root the client offers names it.
    with app_in(elsewhere) as app:
        talk(app, body, roots=[tmp_path / "nowhere", repo / "src"])


def test_roots_outside_every_project_fall_back_to_the_servers_folder(
    app: App, tmp_path: Path, run: Cli
) -> None:
    written = run.json(*DECISION)

    async def body(client: Client) -> None:
        found = payload(await client.call_tool("search", {"query": "task queue"}))
        assert [r["id"] for r in found["results"]] == [written["id"]]

    talk(app, body, roots=[tmp_path])


def test_records_written_over_mcp_belong_to_the_connection_session(app: App, run: Cli) -> None:
    seen: dict[str, str] = {}

    async def body(client: Client) -> None:
        info = payload(await client.call_tool("session_info", {}))
        stored = payload(
            await client.call_tool(
                "remember",
                {"text": "GPU scheduler uses NATS for task transport", "category": "architecture"},
            )
        )
        seen.update(session=info["session"]["id"], record=stored["id"])
        assert stored["session_id"] == info["session"]["id"]

    talk(app, body)
    shown = run.json("session", "show")
    assert shown["session"]["id"] == seen["session"] and shown["session"]["agent"] == "test-agent"
    assert [r["id"] for r in shown["memories"]] == [seen["record"]]


def test_stored_texts_of_the_tools_are_scanned_and_dates_checked(app: App, run: Cli) -> None:
    token = "ghp_" + "Zq8RkV2mXw7NpL4sT9bYcJ3hF6dG1aE5uK0o"
    record = run.json(*DECISION)["id"]

    async def body(client: Client) -> None:
        for tool, arguments in (
            ("archive", {"id": record, "reason": f"superseded, token {token}"}),
            ("learn", {"query": f"where is {token}", "id": record}),
            ("end_session", {"summary": f"pushed with {token}"}),
            ("get_context", {"query": "task queue", "since": "99999999d"}),
        ):
            result = await client.call_tool(tool, arguments)
            assert result.is_error, (tool, result.content[0].text)
            assert token not in result.content[0].text
        assert payload(await client.call_tool("get_entry", {"id": record}))["status"] == "active"

    talk(app, body)


def test_get_context_puts_records_about_a_file_first_and_counts_dates_as_asked(
    app: App, run: Cli
) -> None:
    decided = run.json(*DECISION)
    named = run.json(
        "add", "src/queue/worker.py acks a task after its effects commit", "--category", "gotcha"
    )

    async def body(client: Client) -> None:
        scoped = payload(
            await client.call_tool(
                "get_context", {"query": "task queue", "path": "src/queue/worker.py"}
            )
        )
        assert scoped["results"][0]["id"] == named["id"]
        recent = payload(
            await client.call_tool(
                "get_context", {"query": "task queue", "since": "1d", "dates_by": "verified"}
            )
        )
        assert {r["id"] for r in recent["results"]} >= {decided["id"], named["id"]}
        outside = await client.call_tool(
            "get_context", {"query": "task queue", "path": "/nowhere/else.py"}
        )
        assert outside.is_error and "not inside a folder" in outside.content[0].text

    talk(app, body)


@pytest.mark.usefixtures("local_model")
def test_the_stdio_server_exits_0_however_abruptly_its_client_leaves(repo: Path) -> None:
    """A client that goes while the model still warms, or with a call unanswered, ends the
    server with exit 0 and nothing on stderr (an abort there is exit 134)."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "leaving-agent", "version": "1"},
        },
    }
    search = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": "which queue do workers use"}},
    }
    for in_flight in (False, True, False, True):
        with subprocess.Popen(
            [sys.executable, "-m", "contextd", "mcp", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=repo,
            env=dict(os.environ),
        ) as server:
            assert server.stdin is not None and server.stdout is not None
            server.stdin.write(json.dumps(initialize).encode() + b"\n")
            server.stdin.flush()
            assert b'"id":1' in server.stdout.readline()
            if in_flight:
                server.stdin.write(json.dumps(search).encode() + b"\n")
                server.stdin.flush()
            server.stdin.close()
            server.stdin = None  # communicate() would flush it
            _, err = server.communicate(timeout=60)
        assert (server.returncode, err.decode()) == (0, "")
