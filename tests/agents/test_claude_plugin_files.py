"""The plugin files at the repository's root are what contextd.agents.plugin builds from the
catalogue: the same hooks and MCP server `contextd setup --agent claude` writes."""

import json
import re
import tomllib
from pathlib import Path

from contextd.agents.catalog import agent_named
from contextd.agents.plugin import manifest, marketplace
from contextd.agents.writers import HookWriter
from contextd.mcp.server import TOOL_MODULES

REPO_ROOT = Path(__file__).resolve().parents[2]
PLUGIN = REPO_ROOT / ".claude-plugin"


def _read(name: str) -> object:
    return json.loads((PLUGIN / name).read_text(encoding="utf-8"))


def test_the_committed_manifests_are_the_built_ones() -> None:
    # On a difference: python -m contextd.agents.plugin > .claude-plugin/plugin.json
    # (and `... marketplace > .claude-plugin/marketplace.json`).
    assert _read("plugin.json") == manifest()
    assert _read("marketplace.json") == marketplace()


def test_the_plugin_wires_every_hook_event_setup_wires() -> None:
    claude = agent_named("claude")
    specs = [
        s for t in claude.targets for w in t.writers if isinstance(w, HookWriter) for s in w.specs
    ]
    hooks = manifest()["hooks"]
    for spec in specs:
        commands = [
            handler["command"]
            for group in hooks[spec.agent_event]
            if group.get("matcher") == spec.matcher
            for handler in group["hooks"]
        ]
        assert commands == [f"contextd hook {spec.contextd_event}"]
    assert manifest()["mcpServers"]["contextd"]["args"] == ["mcp", "serve"]


def test_the_plugin_version_is_the_package_version() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert manifest()["version"] == project["project"]["version"]


def test_the_skill_names_only_tools_the_server_has() -> None:
    skill = (REPO_ROOT / "skills" / "project-memory" / "SKILL.md").read_text(encoding="utf-8")
    front = skill.split("---")[1]
    assert "name: project-memory" in front and "description:" in front
    sources = "".join(Path(m.__file__ or "").read_text(encoding="utf-8") for m in TOOL_MODULES)
    tools = set(re.findall(r"@kit\.tool\([^)]*\)\s+def (\w+)\(", sources))
    named = set(re.findall(r"`([a-z]+(?:_[a-z]+)*)`", skill)) - {"contextd"}
    arguments = set(re.findall(r"^\s+(\w+): \w", sources, re.MULTILINE))
    named = {n for n in named if ("_" in n or n in tools) and n not in arguments - tools}
    assert named and named <= tools, named - tools
