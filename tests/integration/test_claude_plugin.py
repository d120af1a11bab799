"""The Claude Code plugin at the repository's root, checked by the real Claude Code: it
validates, installs from the repository's own marketplace, its MCP server connects, and its
SessionStart hook hands the briefing to the model (a stand-in API on loopback)."""

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import make_repo
from tests.integration.conftest import Agents, Wired
from tests.integration.test_real_agents import one_turn, record

REPO_ROOT = Path(__file__).resolve().parents[2]
PLUGIN_PARTS = (".claude-plugin", "skills")  # plugin.json holds the MCP server and hooks


@dataclass(frozen=True)
class Marketplace:
    folder: Path


@pytest.fixture
def marketplace(tmp_path: Path) -> Marketplace:
    """The repository's plugin files, as a clone of it would hold them (a local marketplace
    is copied into Claude Code's cache whole: the work tree's .venv must not come along)."""
    folder = tmp_path / "marketplace"
    for part in PLUGIN_PARTS:
        shutil.copytree(REPO_ROOT / part, folder / part)
    return Marketplace(folder)


def _claude(agents: Agents, wired: Wired, *args: str) -> subprocess.CompletedProcess[str]:
    return agents.run("claude", *args, cwd=wired.project, env=wired.env)


@pytest.fixture
def plugged(agents: Agents, marketplace: Marketplace, tmp_path: Path, home: Path) -> Wired:
    """A fresh home with contextd on the PATH and a project attached, then only the plugin
    (no `contextd setup`): marketplace added, plugin installed."""
    installed = Path(os.environ.get("VIRTUAL_ENV", "")) / "bin" / "contextd"
    if not installed.is_file():
        installed = Path(shutil.which("contextd") or "")
    if not installed.is_file():
        pytest.skip("contextd is not installed beside this interpreter (pip install -e .)")
    user = tmp_path / "user"
    user.mkdir()
    project = make_repo(tmp_path / "orbit")
    env = {
        "HOME": str(user),
        "PATH": os.pathsep.join(
            [str(agents.node.bin_dir), str(installed.parent), "/usr/bin", "/bin"]
        ),
        "CONTEXTD_HOME": str(home),
        "GIT_CONFIG_GLOBAL": os.environ.get("GIT_CONFIG_GLOBAL", ""),
        "GIT_CONFIG_NOSYSTEM": "1",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "LANG": "C.UTF-8",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    attached = subprocess.run(
        [str(installed), "attach"], cwd=project, env=env, capture_output=True, timeout=120
    )
    assert attached.returncode == 0, attached.stderr
    wired = Wired(user, project, env, installed)
    added = _claude(agents, wired, "plugin", "marketplace", "add", str(marketplace.folder))
    assert added.returncode == 0, added.stdout + added.stderr
    done = _claude(agents, wired, "plugin", "install", "contextd@contextd")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Successfully installed plugin: contextd@contextd" in done.stdout, done.stdout
    return wired


def test_claude_code_validates_the_plugin_and_its_marketplace(
    agents: Agents, marketplace: Marketplace, tmp_path: Path
) -> None:
    env = {"HOME": str(tmp_path), "PATH": f"{agents.node.bin_dir}{os.pathsep}/usr/bin:/bin"}
    for target in (marketplace.folder, marketplace.folder / ".claude-plugin" / "plugin.json"):
        done = agents.run("claude", "plugin", "validate", str(target), cwd=tmp_path, env=env)
        said = done.stdout + done.stderr
        assert done.returncode == 0 and "Validation passed" in said, said
        assert "skills: contextd:project-memory" in said, said
        assert 'mcpServers: contextd stdio contextd ["mcp","serve"]' in said, said
        assert 'hooks: SessionStart command "contextd hook session-start"' in said, said


def test_the_installed_plugin_lists_its_server_connected(agents: Agents, plugged: Wired) -> None:
    listed = _claude(agents, plugged, "plugin", "list")
    assert "contextd@contextd" in listed.stdout and "enabled" in listed.stdout, listed.stdout

    done = _claude(agents, plugged, "mcp", "list")

    line = next((ln for ln in done.stdout.splitlines() if "contextd mcp serve" in ln), "")
    assert line.startswith("plugin:contextd:contextd:"), done.stdout + done.stderr
    assert line.endswith("Connected"), done.stdout + done.stderr


def test_the_plugins_session_start_hook_briefs_the_model(
    agents: Agents, plugged: Wired, tmp_path: Path
) -> None:
    record(plugged)
    log = tmp_path / "requests.jsonl"
    claude = [str(agents.bin_dir / "claude"), "-p", "Where should the next worker read tasks from?"]
    env = plugged.env | {"ANTHROPIC_API_KEY": "sk-ant-offline-test"}

    turn = one_turn(agents, plugged, "anthropic", claude, env, log)

    assert "# contextd briefing: orbit" in turn
    assert "Use NATS for the task queue" in turn


def test_setup_beside_the_installed_plugin_adds_no_second_wiring(
    agents: Agents, plugged: Wired
) -> None:
    """The plugin that the real `claude plugin install` turned on is what setup sees."""
    setup = subprocess.run(
        [str(plugged.executable), "setup", "--agent", "claude", "--json"],
        cwd=plugged.project,
        env=plugged.env,
        capture_output=True,
        encoding="utf-8",
        timeout=120,
    )

    assert setup.returncode == 0, setup.stderr
    claude = json.loads(setup.stdout)["agents"][0]
    assert claude["plugin"] == str(plugged.home / ".claude" / "settings.json")
    settings = json.loads((plugged.home / ".claude" / "settings.json").read_text("utf-8"))
    assert "hooks" not in settings, settings
    done = _claude(agents, plugged, "mcp", "list")
    servers = [ln for ln in done.stdout.splitlines() if "contextd mcp serve" in ln]
    assert len(servers) == 1 and servers[0].startswith("plugin:contextd:contextd:"), done.stdout
