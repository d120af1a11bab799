"""Which project the MCP server works on: the call's argument, the agent's project folder,
the client's roots (on the 2026-07-28 protocol too), the server's folder; and session_info
says which it used. A real server where the protocol on the wire or the process's start
matters; the rest in memory, over an App opened where the server would start."""

import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.types import Implementation, ListRootsResult, Root

from mcp import Client, StdioServerParameters
from tests.conftest import DECISION, Cli
from tests.mcp.test_server import app_in, payload, talk


def serve_in(
    folder: Path,
    body: Callable[[Client], Awaitable[None]],
    *,
    mode: str = "auto",
    roots: list[Path] | None = None,
) -> None:
    """The server started in `folder`, driven over `mode` ("auto" speaks
    2026-07-28, "legacy" the handshake-era protocol), offering `roots` when given."""

    async def list_roots(_context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=r.as_uri()) for r in roots or ()])

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "contextd", "mcp", "serve"],
            env=dict(os.environ),
            cwd=str(folder),
        )
        with anyio.fail_after(60):
            async with Client(
                params,
                client_info=Implementation(name="test-agent", version="1.0"),
                list_roots_callback=list_roots if roots is not None else None,
                mode=mode,  # type: ignore[arg-type]
            ) as client:
                await body(client)

    anyio.run(main)


@pytest.fixture
def outside() -> Path:
    """Where a client may start the server: the system's temp folder, in no project."""
    return Path(tempfile.gettempdir())


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_clients_roots_name_the_project_on_every_protocol(
    repo: Path, run: Cli, outside: Path, mode: str
) -> None:
    written = run.json(*DECISION)

    async def body(client: Client) -> None:
        found = payload(await client.call_tool("search", {"query": "task queue"}))
        assert [r["id"] for r in found["results"]] == [written["id"]]
        info = payload(await client.call_tool("session_info", {}))
        assert info["project"] == "orbit"
        assert info["project_from"] == f"the client's root {repo / 'src'}"
        assert info["this_connection"] is True

    serve_in(outside, body, mode=mode, roots=[outside / "nowhere", repo / "src"])


def test_claude_project_dir_names_the_project(
    repo: Path, run: Cli, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = run.json(*DECISION)

    async def body(client: Client) -> None:
        found = payload(await client.call_tool("get_context", {"query": "task queue"}))
        assert written["id"] in found["context"]
        info = payload(await client.call_tool("session_info", {}))
        assert info["project_from"] == f"the agent's project folder {repo}"

    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(repo))  # in the server's environment
    with app_in(outside) as app:
        talk(app, body)


def test_the_calls_project_comes_first(
    repo: Path, run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = run.json(*DECISION)
    other = tmp_path / "other"
    other.mkdir()
    assert run("attach", str(other)).exit_code == 0

    async def body(client: Client) -> None:
        by_name = payload(await client.call_tool("search", {"query": "queue", "project": "orbit"}))
        by_folder = payload(
            await client.call_tool("search", {"query": "queue", "project": str(repo)})
        )
        assert [r["id"] for r in by_name["results"]] == [written["id"]]
        assert [r["id"] for r in by_folder["results"]] == [written["id"]]
        info = payload(await client.call_tool("session_info", {"project": "orbit"}))
        assert info["project_from"] == "the call's project argument"

    # Everything else names the other project: the server's folder, the agent's, the roots.
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(other))
    with app_in(other) as app:
        talk(app, body, roots=[other])


def test_no_project_anywhere_is_an_error_result_that_says_what_to_pass(outside: Path) -> None:
    async def body(client: Client) -> None:
        result = await client.call_tool("get_project_summary", {})
        assert result.is_error
        text = result.content[0].text  # type: ignore[union-attr]
        assert f"No contextd project is attached at {outside}" in text
        assert "pass `project`" in text and "Traceback" not in text
        unknown = await client.call_tool("search", {"query": "x", "project": "nope"})
        assert unknown.is_error and "No project named 'nope'" in unknown.content[0].text  # type: ignore[union-attr]

    with app_in(outside) as app:
        talk(app, body)


def test_the_desktop_way_a_bare_server_in_root_with_a_project_argument(
    repo: Path, run: Cli
) -> None:
    """Claude Desktop starts servers from / with few variables; a call names its project."""
    written = run.json(*DECISION)
    bare = {k: os.environ[k] for k in ("PATH", "CONTEXTD_HOME", "HOME") if k in os.environ}

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "contextd", "mcp", "serve"], env=bare, cwd="/"
        )
        async with Client(params, mode="legacy") as client:
            found = payload(
                await client.call_tool("search", {"query": "task queue", "project": "orbit"})
            )
            assert [r["id"] for r in found["results"]] == [written["id"]]

    anyio.run(main)
