"""With contextd's Claude Code plugin on, `setup` keeps no wiring of its own for Claude Code
(the plugin's hooks and setup's would each run), and `status` and `doctor` say which wires it."""

import json
from pathlib import Path
from typing import Any

from tests.agents.helpers import CLAUDE_SETTINGS, contextd_as, load
from tests.agents.test_setup import our_hooks
from tests.conftest import Cli


def _turn_plugin_on(user_home: Path, value: Any = True, key: str = "contextd@contextd") -> Path:
    settings = user_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    current = load(settings) if settings.exists() else dict(CLAUDE_SETTINGS)
    current["enabledPlugins"] = {"prettier@tools": True, key: value}
    settings.write_text(json.dumps(current, indent=2) + "\n", encoding="utf-8")
    return settings


def test_setup_writes_no_second_wiring_beside_the_plugin(user_home: Path, run: Cli) -> None:
    settings = _turn_plugin_on(user_home)

    result = run("setup", "--agent", "claude")

    assert result.exit_code == 0, result.output
    assert our_hooks(load(settings)) == set()
    assert load(settings)["hooks"] == CLAUDE_SETTINGS["hooks"]  # the user's own hooks stay
    assert not (user_home / ".claude.json").exists()  # no MCP entry of setup's either
    assert "the contextd plugin is on (~/.claude/settings.json)" in result.output
    assert "every hook would run twice" in result.output


def test_setup_takes_its_own_entries_out_once_the_plugin_is_on(user_home: Path, run: Cli) -> None:
    assert run("setup", "--agent", "claude").exit_code == 0
    settings = user_home / ".claude" / "settings.json"
    assert our_hooks(load(settings))  # wired by setup first
    _turn_plugin_on(user_home)

    result = run("setup", "--agent", "claude", "--json")

    assert result.exit_code == 0, result.output
    claude = json.loads(result.output)["agents"][0]
    assert claude["plugin"] == str(settings)
    assert {f["action"] for f in claude["files"]} == {"removed"}
    assert our_hooks(load(settings)) == set()
    assert "contextd" not in load(user_home / ".claude.json").get("mcpServers", {})
    assert load(settings)["enabledPlugins"]["contextd@contextd"] is True


def test_a_plugin_switched_off_or_another_plugin_leaves_setup_as_it_was(
    user_home: Path, run: Cli
) -> None:
    for key, value in (("contextd@contextd", False), ("contextd@x", []), ("notes@tools", True)):
        settings = _turn_plugin_on(user_home, value, key)
        assert run("setup", "--agent", "claude").exit_code == 0
        assert our_hooks(load(settings)), (key, value)
    versions = _turn_plugin_on(user_home, ["0.1.0"], "contextd@mirror")  # on at a version
    assert run("setup", "--agent", "claude").exit_code == 0
    assert our_hooks(load(versions)) == set()


def test_other_agents_are_wired_as_ever_beside_the_plugin(user_home: Path, run: Cli) -> None:
    _turn_plugin_on(user_home)
    (user_home / ".codex").mkdir()

    assert run("setup", "--agent", "claude", "--agent", "codex").exit_code == 0

    assert "contextd" in (user_home / ".codex" / "config.toml").read_text(encoding="utf-8")


def test_status_and_doctor_say_the_plugin_wires_claude_and_warn_when_twice(
    repo: Path, user_home: Path, home: Path, run: Cli
) -> None:
    assert run("setup", "--agent", "claude").exit_code == 0
    _turn_plugin_on(user_home)

    status = contextd_as(user_home, home, repo, "status")
    doctor = json.loads(contextd_as(user_home, home, repo, "doctor", "--json").stdout)

    assert "Claude Code: ! the contextd plugin" in status.stdout
    assert "twice: run `contextd setup --agent claude`" in status.stdout
    finding = next(c for c in doctor["checks"] if c["check"] == "agent claude")
    assert finding["state"] == "warn" and "every hook runs twice" in finding["detail"]

    assert run("setup", "--agent", "claude").exit_code == 0
    doctor = json.loads(contextd_as(user_home, home, repo, "doctor", "--json").stdout)
    finding = next(c for c in doctor["checks"] if c["check"] == "agent claude")
    assert finding["state"] == "ok" and "wired by the contextd plugin" in finding["detail"]
    assert (
        "Claude Code: ✓ the contextd plugin" in contextd_as(user_home, home, repo, "status").stdout
    )


def _project_settings(repo: Path, name: str, value: Any) -> Path:
    settings = repo / ".claude" / name
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"enabledPlugins": {"contextd@contextd": value}}), "utf-8")
    return settings


def test_a_plugin_turned_on_in_the_project_is_seen_there_and_setup_keeps_the_user_wiring(
    repo: Path, user_home: Path, home: Path, run: Cli
) -> None:
    assert run("setup", "--agent", "claude").exit_code == 0
    shared = _project_settings(repo, "settings.json", True)

    status = contextd_as(user_home, home, repo, "status")
    doctor = json.loads(contextd_as(user_home, home, repo, "doctor", "--json").stdout)

    assert "Claude Code: ! the contextd plugin" in status.stdout
    assert f"twice here: the plugin is on in {shared}" in status.stdout
    finding = next(c for c in doctor["checks"] if c["check"] == "agent claude")
    assert finding["state"] == "warn" and "twice in this project" in finding["detail"]
    assert str(shared) in finding["fix"]
    # Other projects still need setup's wiring: setup leaves it in place.
    assert run("setup", "--agent", "claude").exit_code == 0
    assert our_hooks(load(user_home / ".claude" / "settings.json"))


def test_a_project_local_file_turning_the_plugin_off_wins_over_the_others(
    repo: Path, user_home: Path, home: Path
) -> None:
    _turn_plugin_on(user_home)
    _project_settings(repo, "settings.json", True)
    _project_settings(repo, "settings.local.json", False)

    status = contextd_as(user_home, home, repo, "status", "--json")

    claude = next(a for a in json.loads(status.stdout)["agents"] if a["agent"] == "claude")
    assert claude["plugin"] is None


def test_a_broken_project_settings_file_is_named_not_a_traceback(
    repo: Path, user_home: Path, home: Path
) -> None:
    broken = repo / ".claude" / "settings.local.json"
    broken.parent.mkdir(parents=True)
    broken.write_text("{not json", "utf-8")

    doctor = contextd_as(user_home, home, repo, "doctor", "--json")

    finding = next(c for c in json.loads(doctor.stdout)["checks"] if c["check"] == "agent claude")
    assert finding["state"] == "fail" and "settings.local.json" in finding["detail"]
    assert "Traceback" not in doctor.stderr
