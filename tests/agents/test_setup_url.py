"""`contextd setup --url … --token-env VAR`: each agent that can name an HTTP MCP server in
its config file gets one pointing at a `contextd serve`, its token referred to by the
variable (never written), the user's other entries kept; hooks are left out (they run the
local store); switching back to the local server removes the HTTP keys."""

from pathlib import Path

import tomlkit

from tests.agents.helpers import load, snapshot
from tests.conftest import Cli

URL = "https://memory.example.com/mcp"
SECRET = "ctd_" + "s" * 12 + "_" + "t" * 43


def test_setup_url_writes_each_agents_http_entry_with_the_token_by_variable(
    configured_home: Path, run: Cli, monkeypatch: object
) -> None:
    result = run("setup", "--agent", "all", "--url", URL, "--token-env", "CONTEXTD_TOKEN")
    assert result.exit_code == 0, result.output
    home = configured_home
    claude = load(home / ".claude.json")["mcpServers"]
    assert claude["contextd"] == {  # type: ignore[index]
        "type": "http",
        "url": URL,
        "headers": {"Authorization": "Bearer ${CONTEXTD_TOKEN}"},
    }
    assert "github" in claude  # type: ignore[operator]
    codex = tomlkit.parse((home / ".codex/config.toml").read_text(encoding="utf-8"))
    entry = codex["mcp_servers"]["contextd"]  # type: ignore[index]
    assert entry["url"] == URL and entry["bearer_token_env_var"] == "CONTEXTD_TOKEN"  # type: ignore[index]
    assert "command" not in entry  # type: ignore[operator]
    assert codex["model"] == "o4-mini"
    cursor = load(home / ".cursor/mcp.json")["mcpServers"]["contextd"]  # type: ignore[index]
    assert cursor == {"url": URL, "headers": {"Authorization": "Bearer ${env:CONTEXTD_TOKEN}"}}
    gemini = load(home / ".gemini/settings.json")
    assert gemini["mcpServers"]["contextd"] == {  # type: ignore[index]
        "httpUrl": URL,
        "headers": {"Authorization": "Bearer ${CONTEXTD_TOKEN}"},
    }
    assert "contextd" not in str(gemini.get("hooks"))  # hooks need the local store
    assert not (home / ".claude/settings.json").read_text(encoding="utf-8").count("contextd hook")
    windsurf = load(home / ".codeium/windsurf/mcp_config.json")["mcpServers"]["contextd"]  # type: ignore[index]
    assert windsurf["serverUrl"] == URL  # type: ignore[index]
    opencode = load(home / ".config/opencode/opencode.json")["mcp"]["contextd"]  # type: ignore[index]
    assert opencode["type"] == "remote" and opencode["url"] == URL  # type: ignore[index]
    assert opencode["headers"] == {"Authorization": "Bearer {env:CONTEXTD_TOKEN}"}  # type: ignore[index]

    again = run("setup", "--agent", "all", "--url", URL, "--token-env", "CONTEXTD_TOKEN")
    assert again.exit_code == 0 and "Nothing to change" in again.output

    back = run("setup", "--agent", "claude")
    assert back.exit_code == 0, back.output
    local = load(home / ".claude.json")["mcpServers"]["contextd"]  # type: ignore[index]
    assert local["type"] == "stdio" and "url" not in local and "headers" not in local  # type: ignore[operator,index]


def test_setup_url_refuses_what_would_leak_or_cannot_work(user_home: Path, run: Cli) -> None:
    (user_home / ".claude").mkdir()
    before = snapshot(user_home)
    for args, words in (
        (["--url", URL], "--token-env"),
        (["--url", "ftp://memory.example.com/mcp", "--token-env", "T"], "https://"),
        (["--url", "https://me:pw@memory.example.com/mcp", "--token-env", "T"], "password"),
        (["--url", URL, "--token-env", SECRET[:20] + "-x"], "name the variable"),
    ):
        result = run("setup", "--agent", "claude", *args)
        assert result.exit_code != 0
        assert words in result.output
        assert "Traceback" not in result.output
    assert snapshot(user_home) == before
    desktop = run("setup", "--agent", "claude-desktop", "--url", URL, "--token-env", "T")
    assert desktop.exit_code != 0
    assert "Connectors" in desktop.output
