"""`contextd setup` for what each agent needs beyond the common entry: JSON with comments
(Gemini), an environment it filters (Codex), a desktop app started from / (Claude Desktop)."""

import json
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from tests.agents.helpers import load, snapshot
from tests.agents.test_setup import contextd_path, our_hooks
from tests.conftest import Cli

GEMINI_WITH_COMMENTS = """\
{
  // Gemini reads this file as JSON with comments.
  "theme": "GitHub", /* the light one */
  "mcpServers": {
    "docs": {"httpUrl": "https://example.com/mcp"}, // company docs
  },
  "hooks": {
    "BeforeTool": [
      {
        "matcher": "run_shell_command", // every shell command
        "hooks": [{"name": "guard", "type": "command", "command": "~/bin/guard.sh"}]
      }
    ]
  }
}
"""


def test_gemini_settings_with_comments_are_edited_keeping_them(user_home: Path, run: Cli) -> None:
    settings = user_home / ".gemini/settings.json"
    settings.parent.mkdir()
    settings.write_text(GEMINI_WITH_COMMENTS, encoding="utf-8")
    (user_home / ".cursor").mkdir()

    result = run("setup")  # auto-detect: gemini and cursor

    assert result.exit_code == 0, result.output
    text = settings.read_text(encoding="utf-8")
    for line in GEMINI_WITH_COMMENTS.splitlines()[:5]:
        assert line in text  # the comments and the user's lines, as they were
    assert '"docs": {"httpUrl": "https://example.com/mcp"}, // company docs' in text
    assert '"matcher": "run_shell_command", // every shell command' in text
    assert '\n    "contextd": {\n      "command": ' in text  # in the file's own indentation
    assert (user_home / ".cursor/mcp.json").is_file()  # the other agent was wired too

    assert run("setup").output.count("unchanged") >= 2  # idempotent on the commented file
    assert run("setup", "--remove").exit_code == 0
    assert settings.read_text(encoding="utf-8") == GEMINI_WITH_COMMENTS


def test_gemini_commented_settings_get_contextds_hooks(user_home: Path, run: Cli) -> None:
    settings = user_home / ".gemini/settings.json"
    settings.parent.mkdir()
    settings.write_text(GEMINI_WITH_COMMENTS, encoding="utf-8")

    assert run("setup", "--agent", "gemini").exit_code == 0

    from contextd.agents import jsonc

    data = jsonc.load(settings.read_text(encoding="utf-8")).data
    assert ("SessionStart", None, "session-start") in our_hooks(data)
    assert data["hooks"]["BeforeTool"][0]["hooks"][0]["name"] == "guard"


def test_one_broken_file_leaves_the_other_agents_wired(user_home: Path, run: Cli) -> None:
    broken = user_home / ".gemini/settings.json"
    broken.parent.mkdir()
    broken.write_text('{"theme": "GitHub" "x": 1}\n', encoding="utf-8")
    (user_home / ".codex").mkdir()
    (user_home / ".claude").mkdir()

    result = run("setup")

    assert result.exit_code == 5
    assert result.stderr.startswith(f"gemini: {broken} is not valid JSON")
    assert "gemini" in result.stdout and "failed" in result.stdout
    assert "claude" in result.stdout and "codex" in result.stdout
    assert (user_home / ".codex/config.toml").is_file()
    assert (user_home / ".claude.json").is_file()
    assert broken.read_text(encoding="utf-8") == '{"theme": "GitHub" "x": 1}\n'


def codex_entry(user_home: Path) -> dict[str, object]:
    text = (user_home / ".codex/config.toml").read_text(encoding="utf-8")
    entry: dict[str, object] = tomlkit.parse(text)["mcp_servers"]["contextd"].unwrap()  # type: ignore[index, union-attr]
    return entry


def test_codex_gets_the_chosen_home_and_forwards_the_project(
    user_home: Path, run: Cli, home: Path
) -> None:
    (user_home / ".codex").mkdir()

    assert run("setup", "--agent", "codex").exit_code == 0

    assert codex_entry(user_home) == {
        "command": contextd_path(user_home),
        "args": ["mcp", "serve"],
        "env": {"CONTEXTD_HOME": str(home)},
        "env_vars": ["CONTEXTD_PROJECT"],
    }
    text = (user_home / ".codex/config.toml").read_text(encoding="utf-8")
    assert f'env = {{CONTEXTD_HOME = "{home}"}}' in text  # inline, as Codex documents it
    assert run.json("setup", "--agent", "codex")["changed"] is False


def test_codex_with_the_default_home_forwards_both(
    user_home: Path, run: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CONTEXTD_HOME")
    config = user_home / ".codex/config.toml"
    config.parent.mkdir()
    config.write_text(
        '[mcp_servers.contextd]\ncommand = "contextd"\nargs = ["mcp", "serve"]\n'
        'env_vars = ["OPENAI_BASE_URL"]\nenv = { LOG = "1" }\n',
        encoding="utf-8",
    )

    assert run("setup", "--agent", "codex").exit_code == 0

    entry = codex_entry(user_home)
    assert entry["env_vars"] == ["OPENAI_BASE_URL", "CONTEXTD_HOME", "CONTEXTD_PROJECT"]
    assert entry["env"] == {"LOG": "1"}  # the user's own, untouched


def test_codex_hooks_are_written_in_its_hooks_file(user_home: Path, run: Cli) -> None:
    (user_home / ".codex").mkdir()

    assert run("setup", "--agent", "codex").exit_code == 0

    hooks = load(user_home / ".codex/hooks.json")
    assert our_hooks(hooks) == {
        ("SessionStart", None, "session-start"),
        ("UserPromptSubmit", None, "prompt"),
        ("PostToolUse", "apply_patch", "post-edit"),
        ("PostToolUse", "Bash", "post-bash"),
        ("PreCompact", None, "pre-compact"),
        ("Stop", None, "stop"),
    }


def desktop_config(config_home: Path) -> Path:
    return config_home / "Claude/claude_desktop_config.json"


def test_claude_desktop_is_found_and_told_the_home_and_project(
    user_home: Path, run: Cli, home: Path
) -> None:
    path = desktop_config(user_home / ".config")
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps({"mcpServers": {"fs": {"command": "npx", "args": ["fs"]}}, "x": 1}),
        encoding="utf-8",
    )

    result = run.json("setup", "--project", "orbit")

    assert [a["agent"] for a in result["agents"]] == ["claude-desktop"]
    config = load(path)
    assert config["x"] == 1
    assert config["mcpServers"] == {
        "fs": {"command": "npx", "args": ["fs"]},
        "contextd": {
            "command": contextd_path(user_home),
            "args": ["mcp", "serve"],
            "env": {"CONTEXTD_HOME": str(home), "CONTEXTD_PROJECT": "orbit"},
        },
    }


def test_claude_desktop_without_a_project_leaves_it_to_each_call(
    user_home: Path, run: Cli, home: Path
) -> None:
    before = snapshot(user_home)

    assert run("setup", "--agent", "claude-desktop").exit_code == 0

    entry = load(desktop_config(user_home / ".config"))["mcpServers"]["contextd"]  # type: ignore[index]
    assert entry["env"] == {"CONTEXTD_HOME": str(home)}  # type: ignore[index]
    assert run("setup", "--agent", "claude-desktop", "--remove").exit_code == 0
    assert load(desktop_config(user_home / ".config")) == {}
    assert before == {}


def windsurf_entry(user_home: Path) -> Any:
    config = json.loads(
        (user_home / ".codeium/windsurf/mcp_config.json").read_text(encoding="utf-8")
    )
    return config["mcpServers"]["contextd"]


def test_windsurf_gets_the_chosen_home_in_env_keeping_the_users_own(
    user_home: Path, run: Cli, home: Path
) -> None:
    config = user_home / ".codeium/windsurf/mcp_config.json"
    config.parent.mkdir(parents=True)
    config.write_text(
        json.dumps({"mcpServers": {"contextd": {"command": "contextd", "env": {"LOG": "1"}}}}),
        encoding="utf-8",
    )

    assert run("setup", "--agent", "windsurf").exit_code == 0

    assert windsurf_entry(user_home)["env"] == {"LOG": "1", "CONTEXTD_HOME": str(home)}
    assert run.json("setup", "--agent", "windsurf")["changed"] is False


def test_windsurf_with_the_default_home_gets_no_env(
    user_home: Path, run: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CONTEXTD_HOME")
    (user_home / ".codeium/windsurf").mkdir(parents=True)

    assert run("setup", "--agent", "windsurf").exit_code == 0

    assert "env" not in windsurf_entry(user_home)


def test_setting_up_gemini_says_its_trusted_folder_rule(user_home: Path, run: Cli) -> None:
    result = run("setup", "--agent", "gemini")
    assert result.exit_code == 0, result.output
    assert "Gemini CLI connects no MCP server in a folder it does not trust" in result.output
    assert "/permissions" in result.output
    report = run.json("setup", "--agent", "gemini")
    assert "security.folderTrust" in report["agents"][0]["note"]
    assert "does not trust" not in run("setup", "--agent", "gemini", "--remove").output
    assert "does not trust" not in run("setup", "--agent", "cursor").output
