"""Config files real agents leave behind, and helpers to compare folders."""

import json
import os
import subprocess
import sys
from pathlib import Path

CLAUDE_JSON = {
    "numStartups": 41,
    "installMethod": "native",
    "autoUpdates": True,
    "mcpServers": {
        "github": {
            "type": "stdio",
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"},
        }
    },
    "projects": {"/home/ada/orbit": {"allowedTools": [], "mcpServers": {}, "hasTrustDialog": True}},
}
CLAUDE_SETTINGS = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]},
    "hooks": {
        "PostToolUse": [
            {
                "matcher": "Edit|Write",
                "hooks": [{"type": "command", "command": "npx prettier --write ."}],
            }
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send 'Claude is done'"}]}],
    },
}
CODEX_TOML = """\
# Codex settings, kept by hand.
model = "o4-mini"  # the fast one
approval_policy = "on-request"

[mcp_servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
# token comes from the shell
env = { "GITHUB_PERSONAL_ACCESS_TOKEN" = "x" }

[profiles.deep]
model = "o3"
"""
CURSOR_MCP = {"mcpServers": {"linear": {"url": "https://mcp.linear.app/sse"}}}
CURSOR_HOOKS = {"version": 1, "hooks": {"afterFileEdit": [{"command": "./hooks/format.sh"}]}}
GEMINI_SETTINGS = {
    "theme": "GitHub",
    "security": {"auth": {"selectedType": "oauth-personal"}},
    "mcpServers": {"docs": {"httpUrl": "https://example.com/mcp"}},
    "hooksConfig": {"enabled": True},
    "hooks": {
        "BeforeTool": [
            {
                "matcher": "run_shell_command",
                "hooks": [{"name": "guard", "type": "command", "command": "~/bin/guard.sh"}],
            }
        ]
    },
}
WINDSURF_MCP = {"mcpServers": {"sqlite": {"command": "uvx", "args": ["mcp-server-sqlite"]}}}
OPENCODE_JSON = {
    "$schema": "https://opencode.ai/config.json",
    "theme": "opencode",
    "mcp": {"sentry": {"type": "remote", "url": "https://mcp.sentry.dev/mcp"}},
}

FILES: dict[str, object] = {
    ".claude.json": CLAUDE_JSON,
    ".claude/settings.json": CLAUDE_SETTINGS,
    ".codex/config.toml": CODEX_TOML,
    ".cursor/mcp.json": CURSOR_MCP,
    ".cursor/hooks.json": CURSOR_HOOKS,
    ".gemini/settings.json": GEMINI_SETTINGS,
    ".codeium/windsurf/mcp_config.json": WINDSURF_MCP,
    ".config/opencode/opencode.json": OPENCODE_JSON,
}


def add_binary(folder: Path, name: str) -> Path:
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` and its bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def load(path: Path) -> dict[str, object]:
    loaded: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def contextd_as(
    user_home: Path, home: Path, cwd: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    """`contextd ARGS` run in `cwd` as the user of `user_home`, with the store at `home`."""
    env = {**os.environ, "CONTEXTD_HOME": str(home), "HOME": str(user_home)}
    return subprocess.run(
        [sys.executable, "-m", "contextd", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        encoding="utf-8",
        timeout=120,
    )
