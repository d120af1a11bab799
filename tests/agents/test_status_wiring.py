"""`contextd status` says which agents are wired and how, read back from the files `setup`
wrote, and whether the program each entry starts can be found."""

import json
import subprocess
from pathlib import Path
from typing import Any

import tomlkit

from tests.agents.helpers import contextd_as
from tests.conftest import Cli


def _status(
    repo: Path, home: Path, user_home: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    return contextd_as(user_home, home, repo, "status", *args)


def _agents(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    return {agent["agent"]: agent for agent in json.loads(done.stdout)["agents"]}


def test_status_lists_the_wired_agents_with_their_mcp_entry_and_hooks(
    repo: Path, user_home: Path, home: Path, run: Cli
) -> None:
    assert run("setup", "--agent", "claude", "--agent", "windsurf").exit_code == 0
    (user_home / ".cursor").mkdir()  # installed, never set up

    agents = _agents(_status(repo, home, user_home, "--json"))

    claude = agents["claude"]
    assert claude["mcp"]["path"] == str(user_home / ".claude.json")
    assert claude["mcp"]["resolves"] is True
    assert claude["hooks"]["resolves"] is True
    assert {"SessionStart", "UserPromptSubmit", "PreCompact"} <= set(claude["hooks"]["events"])
    assert agents["windsurf"]["mcp"]["resolves"] is True and agents["windsurf"]["hooks"] is None
    assert agents["cursor"] == {
        "agent": "cursor",
        "label": "Cursor",
        "installed": True,
        "mcp": None,
        "hooks": None,
        "plugin": None,
        "problem": None,
    }
    assert "codex" not in agents  # neither installed nor wired

    shown = _status(repo, home, user_home).stdout
    assert "Claude Code: ✓ MCP; ✓ hooks (SessionStart, UserPromptSubmit" in shown
    assert "Cursor: not wired: run `contextd setup --agent cursor`" in shown


def test_an_entry_whose_program_is_gone_is_flagged(
    repo: Path, user_home: Path, home: Path, run: Cli
) -> None:
    assert run("setup", "--agent", "codex").exit_code == 0
    config = user_home / ".codex/config.toml"
    document = tomlkit.parse(config.read_text(encoding="utf-8"))
    document["mcp_servers"]["contextd"]["command"] = "/opt/old/bin/contextd"  # type: ignore[index]
    config.write_text(tomlkit.dumps(document), encoding="utf-8")

    codex = _agents(_status(repo, home, user_home, "--json"))["codex"]
    assert codex["mcp"] == {
        "path": str(config),
        "command": "/opt/old/bin/contextd",
        "resolves": False,
    }
    assert codex["hooks"]["resolves"] is True
    shown = _status(repo, home, user_home).stdout
    assert "Codex CLI: ! MCP: /opt/old/bin/contextd not found; ✓ hooks" in shown


def test_an_unreadable_agent_file_is_named_not_fatal(
    repo: Path, user_home: Path, home: Path
) -> None:
    (user_home / ".gemini").mkdir()
    (user_home / ".gemini/settings.json").write_text("{ not json", encoding="utf-8")

    done = _status(repo, home, user_home, "--json")
    gemini = _agents(done)["gemini"]
    assert gemini["mcp"] is None and "settings.json" in gemini["problem"]


def test_no_agent_at_all_says_how_to_wire_one(repo: Path, user_home: Path, home: Path) -> None:
    assert _agents(_status(repo, home, user_home, "--json")) == {}
    assert (
        "Agents       none found: `contextd setup --agent NAME`"
        in _status(repo, home, user_home).stdout
    )
