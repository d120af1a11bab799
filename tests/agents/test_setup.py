"""`contextd setup` against temporary homes holding realistic agent config files."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from tests.agents.helpers import (
    CLAUDE_JSON,
    CLAUDE_SETTINGS,
    CODEX_TOML,
    CURSOR_HOOKS,
    CURSOR_MCP,
    FILES,
    GEMINI_SETTINGS,
    OPENCODE_JSON,
    WINDSURF_MCP,
    add_binary,
    load,
    snapshot,
)
from tests.conftest import Cli

CLAUDE_EVENTS = {
    ("SessionStart", None, "session-start"),
    ("UserPromptSubmit", None, "prompt"),
    ("PostToolUse", "Edit|Write|MultiEdit|NotebookEdit", "post-edit"),
    ("PostToolUse", "Bash", "post-bash"),
    ("PreCompact", None, "pre-compact"),
    ("Stop", None, "stop"),
    ("SessionEnd", None, "session-end"),
}


def contextd_path(home: Path) -> str:
    return str(home.parent / "bin" / "contextd")


def our_hooks(settings: dict[str, Any]) -> set[tuple[str, str | None, str]]:
    found = set()
    for event, groups in settings.get("hooks", {}).items():
        for group in groups if isinstance(groups, list) else []:
            for handler in group.get("hooks", []):
                words = handler["command"].split()
                if words[1:2] == ["hook"]:
                    found.add((event, group.get("matcher"), words[2]))
    return found


def test_setup_wires_every_agent_and_keeps_the_users_settings(
    configured_home: Path, run: Cli, home: Path
) -> None:
    result = run("setup", "--agent", "all")
    assert result.exit_code == 0, result.output
    exe = contextd_path(configured_home)

    claude = load(configured_home / ".claude.json")
    servers = claude.pop("mcpServers")
    assert servers == CLAUDE_JSON["mcpServers"] | {  # type: ignore[operator]
        "contextd": {"type": "stdio", "command": exe, "args": ["mcp", "serve"], "env": {}}
    }
    assert claude == {k: v for k, v in CLAUDE_JSON.items() if k != "mcpServers"}
    assert list(load(configured_home / ".claude.json")) == list(CLAUDE_JSON)  # key order

    settings = load(configured_home / ".claude/settings.json")
    assert our_hooks(settings) == CLAUDE_EVENTS
    hooks: Any = settings["hooks"]
    assert hooks["PostToolUse"][0] == CLAUDE_SETTINGS["hooks"]["PostToolUse"][0]  # type: ignore[index]
    assert hooks["Stop"][0] == CLAUDE_SETTINGS["hooks"]["Stop"][0]  # type: ignore[index]
    assert hooks["SessionStart"] == [
        {"hooks": [{"type": "command", "command": f"{exe} hook session-start", "timeout": 10}]}
    ]
    assert {k: v for k, v in settings.items() if k != "hooks"} == {
        k: v for k, v in CLAUDE_SETTINGS.items() if k != "hooks"
    }

    codex = (configured_home / ".codex/config.toml").read_text(encoding="utf-8")
    assert codex.startswith(CODEX_TOML.split("[profiles.deep]")[0])  # comments and order kept
    assert "# token comes from the shell" in codex and "# the fast one" in codex
    assert tomlkit.parse(codex)["mcp_servers"]["contextd"] == {  # type: ignore[index]
        "command": exe,
        "args": ["mcp", "serve"],
        "env": {"CONTEXTD_HOME": str(home)},  # Codex passes its servers no CONTEXTD_* itself
        "env_vars": ["CONTEXTD_PROJECT"],
    }
    assert tomlkit.parse(codex)["profiles"] == {"deep": {"model": "o3"}}

    assert load(configured_home / ".cursor/mcp.json")["mcpServers"] == CURSOR_MCP["mcpServers"] | {
        "contextd": {"command": exe, "args": ["mcp", "serve"]}
    }
    assert load(configured_home / ".cursor/hooks.json") == {
        "version": 1,
        "hooks": CURSOR_HOOKS["hooks"]  # type: ignore[operator]
        | {"sessionStart": [{"command": f"{exe} hook session-start"}]},
    }

    gemini_text = (configured_home / ".gemini/settings.json").read_text(encoding="utf-8")
    assert '\n    "theme": "GitHub"' in gemini_text  # its 4-space indent kept
    gemini = json.loads(gemini_text)
    assert gemini["hooksConfig"] == {"enabled": True}
    assert gemini["mcpServers"]["docs"] == GEMINI_SETTINGS["mcpServers"]["docs"]  # type: ignore[index]
    assert gemini["hooks"]["BeforeTool"] == GEMINI_SETTINGS["hooks"]["BeforeTool"]  # type: ignore[index]
    assert our_hooks(gemini) == {
        ("SessionStart", None, "session-start"),
        ("BeforeAgent", None, "prompt"),
        ("AfterTool", "write_file|replace", "post-edit"),
        ("AfterTool", "run_shell_command", "post-bash"),
        ("PreCompress", None, "pre-compact"),
        ("AfterAgent", None, "stop"),
        ("SessionEnd", None, "session-end"),
    }

    windsurf = load(configured_home / ".codeium/windsurf/mcp_config.json")
    assert windsurf["mcpServers"] == WINDSURF_MCP["mcpServers"] | {
        "contextd": {
            "command": exe,
            "args": ["mcp", "serve"],
            "env": {"CONTEXTD_HOME": str(home)},  # a chosen home: Windsurf is started elsewhere
        }
    }
    opencode = load(configured_home / ".config/opencode/opencode.json")
    assert opencode["mcp"] == OPENCODE_JSON["mcp"] | {  # type: ignore[operator]
        "contextd": {"type": "local", "command": [exe, "mcp", "serve"], "enabled": True}
    }
    assert "claude" in result.output and "added" in result.output


def test_a_second_run_changes_nothing_and_says_so(configured_home: Path, run: Cli) -> None:
    assert run("setup", "--agent", "all").exit_code == 0
    before = snapshot(configured_home)

    again = run("setup", "--agent", "all")

    assert again.exit_code == 0, again.output
    assert "Nothing to change" in again.output
    assert snapshot(configured_home) == before  # no rewrite, no new backup
    report = run.json("setup", "--agent", "all")
    assert report["changed"] is False
    assert {f["action"] for a in report["agents"] for f in a["files"]} == {"unchanged"}


def test_each_changed_file_is_backed_up_with_its_original_bytes(
    configured_home: Path, run: Cli
) -> None:
    originals = snapshot(configured_home)

    report = run.json("setup", "--agent", "all")

    existing = [f for a in report["agents"] for f in a["files"] if f["backup"]]
    assert len(existing) == len(FILES)  # a file setup creates has nothing to back up
    for change in existing:
        backup = Path(change["backup"])
        assert backup.parent == Path(change["path"]).parent
        assert backup.name.startswith(Path(change["path"]).name + ".contextd-backup-")
        assert (
            backup.read_bytes() == originals[str(Path(change["path"]).relative_to(configured_home))]
        )


def test_remove_takes_out_exactly_ours(configured_home: Path, run: Cli) -> None:
    originals = snapshot(configured_home)
    assert run("setup", "--agent", "all").exit_code == 0

    removed = run.json("setup", "--agent", "all", "--remove")

    assert {f["action"] for a in removed["agents"] for f in a["files"]} == {"removed"}
    for relative, content in originals.items():
        now = (configured_home / relative).read_text(encoding="utf-8")
        if relative.endswith(".toml"):
            assert now == content.decode()  # byte for byte, comments included
        else:
            assert json.loads(now) == json.loads(content)
    assert run.json("setup", "--agent", "all", "--remove")["changed"] is False


def test_remove_leaves_the_users_hooks_that_share_our_group(user_home: Path, run: Cli) -> None:
    settings = user_home / ".claude/settings.json"
    settings.parent.mkdir()
    mixed = {
        "hooks": {
            "UserPromptSubmit": [
                {
                    "hooks": [
                        {"type": "command", "command": "~/bin/log-prompt"},
                        {"type": "command", "command": "/opt/old/bin/contextd hook prompt"},
                    ]
                }
            ]
        }
    }
    settings.write_text(json.dumps(mixed), encoding="utf-8")

    assert run("setup", "--agent", "claude", "--remove").exit_code == 0

    assert load(settings) == {
        "hooks": {
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "~/bin/log-prompt"}]}]
        }
    }


def test_a_stale_entry_is_updated_keeping_what_the_user_added(user_home: Path, run: Cli) -> None:
    claude = user_home / ".claude.json"
    stale = {
        "type": "stdio",
        "command": "/old/venv/bin/contextd",
        "args": ["mcp", "serve", "--read-only"],
        "env": {"CONTEXTD_HOME": "/data/memory"},
    }
    claude.write_text(json.dumps({"mcpServers": {"contextd": stale}}), encoding="utf-8")
    (user_home / ".claude").mkdir()
    (user_home / ".claude/settings.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"command": "contextd hook stop"}]}]}}),
        encoding="utf-8",
    )

    report = run.json("setup", "--agent", "claude")

    actions = {Path(f["path"]).name: f["action"] for f in report["agents"][0]["files"]}
    assert actions == {".claude.json": "updated", "settings.json": "updated"}
    assert load(claude)["mcpServers"] == {"contextd": stale | {"command": contextd_path(user_home)}}
    settings = load(user_home / ".claude/settings.json")
    assert our_hooks(settings) == CLAUDE_EVENTS  # the old hand-made stop hook was replaced
    assert claude.read_text(encoding="utf-8").count("\n") == 0  # a one-line file stays one line


def test_dry_run_shows_the_change_and_writes_nothing(configured_home: Path, run: Cli) -> None:
    before = snapshot(configured_home)

    result = run("setup", "--agent", "all", "--dry-run")

    assert result.exit_code == 0, result.output
    assert snapshot(configured_home) == before
    assert "would be added" in result.output
    assert "+[mcp_servers.contextd]" in result.output
    assert "Dry run: nothing was written." in result.output
    report = run.json("setup", "--agent", "claude", "--dry-run")
    assert report["dry_run"] is True and report["changed"] is True
    assert all(f["backup"] is None for f in report["agents"][0]["files"])
    assert snapshot(configured_home) == before


@pytest.mark.parametrize(
    ("relative", "text", "says"),
    [
        (".claude/settings.json", '{"model": "opus" "x"}\n', "not valid JSON"),
        (".codex/config.toml", "[mcp_servers\ncommand = 1\n", "not valid TOML"),
        (".cursor/mcp.json", '["not", "an", "object"]', "does not hold a JSON object"),
        (".gemini/settings.json", '{"mcpServers": ["x"]}', "'mcpServers' is not an object"),
        (".claude/settings.json", '{"hooks": {"Stop": {"x": 1}}}', "'hooks.Stop' is not"),
        (".codeium/windsurf/mcp_config.json", b"\xff\xfe{}", "not UTF-8"),
    ],
)
def test_a_file_that_cannot_be_parsed_stops_only_its_agent(
    configured_home: Path, run: Cli, relative: str, text: str | bytes, says: str
) -> None:
    path = configured_home / relative
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    before = snapshot(configured_home)

    result = run("setup", "--agent", "all", "--json")

    assert result.exit_code == 5
    assert says in result.stderr and str(path) in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    report = json.loads(result.stdout)
    broken = {a["agent"] for a in report["agents"] if a["error"]}
    assert len(broken) == 1 and result.stderr.startswith(f"{broken.pop()}: ")
    after = snapshot(configured_home)
    agent_folder = relative.split("/")[0]
    untouched = {k: v for k, v in before.items() if k.split("/")[0] == agent_folder}
    assert all(after[k] == v for k, v in untouched.items())  # the broken agent: as it was
    written = [a for a in report["agents"] if not a["error"] and a["files"]]
    assert len(written) == len(report["agents"]) - 1  # every other agent: set up
    assert all(f["action"] == "added" for a in written for f in a["files"])


def test_detection_finds_config_folders_and_binaries_on_path(
    user_home: Path, tmp_path: Path, run: Cli
) -> None:
    (user_home / ".gemini").mkdir()
    add_binary(tmp_path / "bin", "codex")
    (user_home / ".config/opencode").mkdir(parents=True)

    report = run.json("setup")

    assert [a["agent"] for a in report["agents"]] == ["codex", "gemini", "opencode"]
    assert (user_home / ".codex/config.toml").is_file()
    assert not (user_home / ".claude.json").exists()
    assert not (user_home / ".cursor").exists()


def test_detection_follows_xdg_config_home(
    user_home: Path, tmp_path: Path, run: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    xdg = tmp_path / "xdg"
    (xdg / "opencode").mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))

    report = run.json("setup")

    assert [a["agent"] for a in report["agents"]] == ["opencode"]
    assert load(xdg / "opencode/opencode.json")["mcp"]["contextd"]["type"] == "local"  # type: ignore[index]


def test_no_agent_found_is_an_error_that_names_the_option(user_home: Path, run: Cli) -> None:
    result = run("setup")

    assert result.exit_code == 3
    assert "--agent" in result.stderr
    assert list(user_home.iterdir()) == []


def test_an_unknown_agent_is_refused(user_home: Path, run: Cli) -> None:
    result = run("setup", "--agent", "vim")

    assert result.exit_code == 2
    assert list(user_home.iterdir()) == []


def test_without_contextd_on_path_the_bare_name_is_written(
    user_home: Path, tmp_path: Path, run: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))

    report = run.json("setup", "--agent", "windsurf")

    assert report["executable"] == "contextd"
    config = load(user_home / ".codeium/windsurf/mcp_config.json")
    entry = config["mcpServers"]["contextd"]  # type: ignore[index]
    assert (entry["command"], entry["args"]) == ("contextd", ["mcp", "serve"])


def test_a_path_with_spaces_is_quoted_in_hook_commands(
    user_home: Path, tmp_path: Path, run: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    spaced = tmp_path / "my tools"
    spaced.mkdir()
    add_binary(spaced, "contextd")
    monkeypatch.setenv("PATH", str(spaced))

    assert run("setup", "--agent", "cursor").exit_code == 0

    hooks: Any = load(user_home / ".cursor/hooks.json")["hooks"]
    assert hooks["sessionStart"] == [{"command": f"'{spaced}/contextd' hook session-start"}]


def test_a_symlinked_config_stays_a_symlink(user_home: Path, tmp_path: Path, run: Cli) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "mcp.json"
    real.write_text(json.dumps(CURSOR_MCP), encoding="utf-8")
    (user_home / ".cursor").mkdir()
    (user_home / ".cursor/mcp.json").symlink_to(real)
    real.chmod(0o640)

    assert run("setup", "--agent", "cursor").exit_code == 0

    assert (user_home / ".cursor/mcp.json").is_symlink()
    assert "contextd" in load(real)["mcpServers"]  # type: ignore[operator]
    assert real.stat().st_mode & 0o777 == 0o640


def test_remove_without_config_files_creates_none(user_home: Path, run: Cli) -> None:
    report = run.json("setup", "--agent", "all", "--remove")

    assert report["changed"] is False
    assert list(user_home.iterdir()) == []


def test_the_installed_command_writes_its_own_path(user_home: Path) -> None:
    installed = Path(sys.executable).parent / "contextd"
    if not installed.is_file():
        pytest.skip("contextd is not installed beside this interpreter")
    env = os.environ | {"HOME": str(user_home), "PATH": "/usr/bin:/bin"}

    done = subprocess.run(
        [str(installed), "setup", "--agent", "claude", "--json"],
        env=env,
        capture_output=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["executable"] == str(installed)
    hooks: Any = load(user_home / ".claude/settings.json")["hooks"]
    assert hooks["Stop"][0]["hooks"][0]["command"] == f"{installed} hook stop"


@pytest.mark.parametrize(
    "original",
    [
        '# only a model\nmodel = "o3"\n\n[profiles.fast]\nmodel = "o4-mini"\n',
        'mcp_servers = { github = { command = "npx" } }  # inline\n',
        "",
    ],
)
def test_codex_layouts_round_trip(user_home: Path, run: Cli, original: str) -> None:
    config = user_home / ".codex/config.toml"
    config.parent.mkdir()
    config.write_text(original, encoding="utf-8")

    assert run("setup", "--agent", "codex").exit_code == 0
    added = tomlkit.parse(config.read_text(encoding="utf-8"))
    assert added["mcp_servers"]["contextd"]["args"] == ["mcp", "serve"]  # type: ignore[index]
    assert run.json("setup", "--agent", "codex")["changed"] is False
    assert run("setup", "--agent", "codex", "--remove").exit_code == 0

    assert tomlkit.parse(config.read_text(encoding="utf-8")) == tomlkit.parse(original)
    if original:
        assert config.read_text(encoding="utf-8").startswith(original.rstrip("\n"))
