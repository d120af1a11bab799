"""A home on a read-only filesystem serves every read with a note that writes are off; a
write is refused in one sentence, and nothing in the home changes."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from contextd.app import open_app
from contextd.config import load_settings
from contextd.errors import StoreError
from contextd.models import Kind, MemoryBody, RecordDraft
from tests.conftest import Cli


def _read_only(
    home: Path, *command: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `command` with `home` bind-mounted read-only, in a private mount namespace (the
    only way to make root see a read-only folder)."""
    script = f'mount --bind "{home}" "{home}" && mount -o remount,bind,ro "{home}" && ' + " ".join(
        f"'{part}'" for part in command
    )
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", script],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=os.environ.copy(),
        timeout=60,
        check=False,
    )


@pytest.mark.usefixtures("repo")
def test_a_write_to_a_read_only_home_is_refused_and_it_is_left_as_it_was(
    run: Cli, home: Path
) -> None:
    if (
        shutil.which("unshare") is None
        or subprocess.run(["unshare", "-rm", "true"], capture_output=True, check=False).returncode
        != 0
    ):
        pytest.skip("this machine cannot make a private mount namespace (unshare -rm)")
    run.json("add", "Builds need Node 20 or newer on every runner", "--category", "gotcha")
    before = {p.name: p.read_bytes() for p in home.iterdir() if p.is_file()}
    done = _read_only(
        home,
        sys.executable,
        "-m",
        "contextd",
        "--project",
        "orbit",
        "add",
        "Deploys run from the release branch only",
        "--category",
        "convention",
    )
    assert done.returncode == 6
    note, error = done.stderr.splitlines()
    assert note.startswith("Note: ") and "writes are off" in note
    assert error.startswith("Error: ") and "read-only" in error and "Traceback" not in error
    after = {p.name: p.read_bytes() for p in home.iterdir() if p.is_file()}
    assert after == before
    assert len(run.json("memories")["records"]) == 1


def _can_mount_privately() -> bool:
    return (
        shutil.which("unshare") is not None
        and subprocess.run(["unshare", "-rm", "true"], capture_output=True, check=False).returncode
        == 0
    )


def _home_files(home: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in home.iterdir() if p.is_file()}


@pytest.mark.usefixtures("repo")
def test_a_bundle_is_exported_from_a_read_only_home(run: Cli, home: Path, tmp_path: Path) -> None:
    if not _can_mount_privately():
        pytest.skip("this machine cannot make a private mount namespace (unshare -rm)")
    run.json("add", "Builds need Node 20 or newer on every runner", "--category", "gotcha")
    run.json("add", "Deploys run from the release branch only", "--category", "convention")
    before = _home_files(home)
    out = tmp_path / "out.json"
    done = _read_only(
        home, sys.executable, "-m", "contextd", "bundle", "export", "--out", str(out), "--json"
    )
    assert done.returncode == 0, done.stderr
    assert (
        json.loads(done.stdout)["records"] == 2 and json.loads(done.stdout)["remembered"] is False
    )
    assert "read-only" in done.stderr and "sync conflicts" in done.stderr
    assert _home_files(home) == before  # nothing written, nothing created beside the store

    other = tmp_path / "other-home"
    other.mkdir()
    (other / "config.toml").write_text('[embeddings]\nprovider = "hashing"\n', encoding="utf-8")
    merged = run.json("--home", str(other), "bundle", "import", "--file", str(out))
    assert merged["added"] == 2


@pytest.mark.usefixtures("repo")
def test_a_read_only_store_exports_without_writing_a_byte(run: Cli, home: Path) -> None:
    """As root permission bits mean nothing, so this opens the store read-only directly: the
    export must run no write statement (SQLite refuses every one on this connection)."""
    run.json("add", "Builds need Node 20 or newer on every runner", "--category", "gotcha")
    before = _home_files(home)
    with open_app(load_settings(), read_only=True) as app:
        bundle = app.sync.export(remember=False)
        assert [r.record.title for r in bundle.records] == [
            "Builds need Node 20 or newer on every runner"
        ]
        with pytest.raises(StoreError, match="read-only"):
            app.sync.export()  # remembering is a write
        draft = RecordDraft(
            kind=Kind.MEMORY,
            title="Deploys run from the release branch only",
            body=MemoryBody(),
            category="convention",
        )
        with pytest.raises(StoreError, match="read-only"):
            app.writer.create(draft, app.current_project())
    assert _home_files(home) == before


def test_a_read_only_open_of_a_missing_store_is_refused(home: Path) -> None:
    with (
        pytest.raises(StoreError, match="no contextd store"),
        open_app(load_settings(), read_only=True),
    ):
        pass
    assert not (home / "contextd.db").exists()


@pytest.mark.usefixtures("repo")
def test_the_daemon_does_not_start_in_a_read_only_home(run: Cli, home: Path) -> None:
    if not _can_mount_privately():
        pytest.skip("this machine cannot make a private mount namespace (unshare -rm)")
    run.json("add", "Builds need Node 20 or newer on every runner", "--category", "gotcha")
    before = _home_files(home)
    done = _read_only(home, sys.executable, "-m", "contextd", "daemon", "start")
    assert done.returncode == 5, done.stderr
    assert done.stderr == (
        f"Error: {home} is read-only, and the daemon keeps its lock and socket record there; "
        "commands and hooks work without it.\n"
    )
    assert _home_files(home) == before


_MCP_CLIENT = """
import asyncio, json, os, sys
from mcp import Client, StdioServerParameters

async def main():
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "contextd", "mcp", "serve", "--read-only"],
        env=dict(os.environ),
        cwd=os.getcwd(),
    )
    async with Client(params) as client:
        out = {}
        for tool, arguments in json.loads(sys.argv[1]):
            result = await client.call_tool(tool, arguments)
            out[tool] = [result.is_error, result.content[0].text]
        print(json.dumps(out))

asyncio.run(main())
"""


def test_every_read_works_on_a_read_only_home(
    run: Cli, home: Path, repo: Path, tmp_path: Path
) -> None:
    """search, recall, status, memories, show, the hooks and the read-only MCP server all
    answer from a read-only mount, each saying that writes are off; nothing is written."""
    if not _can_mount_privately():
        pytest.skip("this machine cannot make a private mount namespace (unshare -rm)")
    rule = run.json(
        "constrain",
        "Never edit an applied migration",
        "--reason",
        "Applied migrations are checksummed and an edit breaks the next deploy",
        "--hardness",
        "absolute",
        "--scope",
        "migrations/**",
    )["id"]
    note = run.json(
        "add", "The task queue moved from Redis to NATS JetStream", "--category", "architecture"
    )["id"]
    before = _home_files(home)
    contextd = [sys.executable, "-m", "contextd"]
    for command in (
        ["search", "task queue", "--json"],
        ["recall", "task queue", "--json"],
        ["status", "--json"],
        ["memories", "--json"],
        ["show", note, "--json"],
    ):
        done = _read_only(home, *contextd, *command)
        assert done.returncode == 0, (command, done.stderr)
        assert "writes are off" in done.stderr
        assert note in done.stdout or command[0] == "status", command
    start = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "SessionStart"}
    prompt = {
        "session_id": "s1",
        "cwd": str(repo),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "Where does the task queue run now that Redis is gone for good?",
    }
    edit = {
        "session_id": "s1",
        "cwd": str(repo),
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": str(repo / "migrations" / "0042.sql")},
    }
    answers = {}
    for event, payload in (("session-start", start), ("prompt", prompt), ("post-edit", edit)):
        done = _read_only(home, *contextd, "hook", event, stdin=json.dumps(payload))
        assert done.returncode == 0 and done.stdout, (event, done.stderr)
        answers[event] = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert rule in answers["session-start"] and "writes are off" in answers["session-start"]
    assert note in answers["prompt"] and rule in answers["post-edit"]

    script = tmp_path / "client.py"
    script.write_text(_MCP_CLIENT, encoding="utf-8")
    calls = [
        ("get_project_summary", {}),
        ("search", {"query": "task queue"}),
        ("get_context", {"query": "task queue"}),
        ("get_entry", {"id": rule}),
    ]
    done = _read_only(home, sys.executable, str(script), json.dumps(calls))
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert all(not failed for failed, _ in results.values()), results
    assert "writes are off" in results["get_project_summary"][1]
    assert note in results["search"][1] and rule in results["get_entry"][1]
    assert _home_files(home) == before
