"""The Claude Code plugin's manifest (.claude-plugin/plugin.json at the repository's root):
the MCP server and the hooks `contextd setup --agent claude` wires, written by the same
writers from the same catalogue row, with `contextd` found on the PATH (a plugin cannot know
where contextd is installed). `python -m contextd.agents.plugin` prints it; a test keeps the
committed file equal to it."""

import json
import sys
from pathlib import Path
from typing import Any

from contextd.agents.catalog import Agent, Places, agent_named
from contextd.agents.files import Format, parse, read_config
from contextd.agents.writers import Launcher

__all__ = ["MARKETPLACE", "PLUGIN_NAME", "enabled_by", "manifest", "marketplace"]

PLUGIN_NAME = "contextd"
MARKETPLACE = "contextd"
VERSION = "0.1.0"
DESCRIPTION = (
    "Project memory for AI coding agents: decisions, constraints, workflows, gotchas and "
    "checkpoints recorded once and handed to each session (needs `contextd` on the PATH)."
)
AUTHOR = {"name": "contextd contributors"}


def manifest() -> dict[str, Any]:
    """plugin.json: metadata, then what the Claude Code row of the catalogue writes."""
    wired: dict[str, Any] = {}
    launcher = Launcher("contextd")
    for target in agent_named("claude").targets:
        for writer in target.writers:
            writer.install(wired, launcher)
    return {
        "name": PLUGIN_NAME,
        "version": VERSION,
        "description": DESCRIPTION,
        "author": AUTHOR,
        "license": "MIT",
        "keywords": ["memory", "mcp", "context", "decisions"],
        "mcpServers": wired["mcpServers"],
        "hooks": wired["hooks"],
    }


def marketplace() -> dict[str, Any]:
    """marketplace.json: this repository as a marketplace of one plugin, itself ("./")."""
    return {
        "name": MARKETPLACE,
        "owner": AUTHOR,
        "description": "contextd's own marketplace: the contextd plugin.",
        "plugins": [
            {"name": PLUGIN_NAME, "source": "./", "description": DESCRIPTION, "version": VERSION}
        ],
    }


def enabled_by(agent: Agent, places: Places, checkout: Path | None = None) -> Path | None:
    """The settings file that turns this plugin on for `agent` (from any marketplace:
    `contextd@…`), or None when none does. The user's file is read, then, for a `checkout`,
    that project's shared and local files, each one that names the plugin overriding the
    one before, as the agent reads them.

    Raises:
        ConfigError: one of those files cannot be read or parsed.
    """
    if not agent.plugin_settings:
        return None
    files = [places.home / agent.plugin_settings]
    if checkout is not None:
        files += [checkout / name for name in agent.plugin_project_settings]
    decided = None
    for path in files:
        switched = _switch(path)
        if switched is not None:
            decided = path if switched else None
    return decided


def _switch(path: Path) -> bool | None:
    """Whether the file's enabledPlugins turns the plugin on or off; None: it does not say."""
    content = read_config(path)
    if content is None:
        return None
    enabled = parse(path, content, Format.JSON).data.get("enabledPlugins")
    if not isinstance(enabled, dict):
        return None
    named = [
        _switched_on(value)
        for key, value in enabled.items()
        if isinstance(key, str) and key.partition("@")[0] == PLUGIN_NAME
    ]
    return any(named) if named else None


def _switched_on(value: object) -> bool:
    """An enabledPlugins value that turns a plugin on: true, or the versions it is on at."""
    return value is True or (isinstance(value, list) and bool(value))


def text(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else "plugin"
    sys.stdout.write(text(marketplace() if which == "marketplace" else manifest()))
