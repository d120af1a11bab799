"""The agents contextd can wire itself into: where their config lives and what goes in it.

Hooks are written only where the agent runs command hooks with a JSON payload on stdin that can
add context. Windsurf (Cascade hooks add no context), opencode (hooks are JS plugins) and
Claude Desktop (no hooks) get the MCP server only.
"""

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from msgspec import Struct

from contextd.agents.files import Format
from contextd.agents.writers import HookSpec, HookWriter, McpJsonWriter, McpTomlWriter, Writer
from contextd.errors import InvalidInputError

__all__ = ["AGENTS", "Agent", "Places", "Target", "agent_named", "detect"]


class Places(Struct, frozen=True):
    """Where to look: the user's home, their XDG config folder, the PATH to search, and the
    folder desktop applications keep their settings in (macOS: ~/Library/Application Support,
    Windows: %APPDATA%, elsewhere the XDG config folder)."""

    home: Path
    config_home: Path
    search_path: str | None = None
    app_data: Path | None = None

    @property
    def applications(self) -> Path:
        return self.app_data or self.config_home


class Target(Struct, frozen=True):
    """One config file of an agent and the writer that edits it."""

    relative: str
    fmt: Format
    writers: tuple[Writer, ...]
    base: str = "home"  # under ~, "config" ($XDG_CONFIG_HOME), "applications" (Places)

    def path(self, places: Places) -> Path:
        return _base(places, self.base) / self.relative


def _base(places: Places, base: str) -> Path:
    return {"config": places.config_home, "applications": places.applications}.get(
        base, places.home
    )


class Agent(Struct, frozen=True):
    name: str
    label: str
    markers: tuple[str, ...]  # folders or files under ~ whose presence means it is installed
    binaries: tuple[str, ...]
    targets: tuple[Target, ...]
    config_markers: tuple[str, ...] = ()  # the same, under $XDG_CONFIG_HOME
    app_markers: tuple[str, ...] = ()  # the same, under the applications' settings folder
    note: str = ""  # what a person must still do for the wiring to work, said after setup
    # The settings file under ~ whose enabledPlugins can turn on contextd's own plugin, which
    # wires what setup would: then setup keeps no copy of its own (hooks would run twice).
    plugin_settings: str = ""
    # The same in a project, read after it (the shared file, then the local one).
    plugin_project_settings: tuple[str, ...] = ()

    def installed(self, places: Places) -> bool:
        if any((places.home / marker).exists() for marker in self.markers):
            return True
        if any((places.config_home / marker).exists() for marker in self.config_markers):
            return True
        if any((places.applications / marker).exists() for marker in self.app_markers):
            return True
        return any(shutil.which(b, path=places.search_path) for b in self.binaries)


# Claude Code hook events and matchers (code.claude.com/docs/en/hooks): the tool names of its
# file edits are Edit, Write, MultiEdit and NotebookEdit.
_CLAUDE_HOOKS = (
    HookSpec("SessionStart", "session-start"),
    HookSpec("UserPromptSubmit", "prompt"),
    HookSpec("PostToolUse", "post-edit", "Edit|Write|MultiEdit|NotebookEdit"),
    HookSpec("PostToolUse", "post-bash", "Bash"),
    HookSpec("PreCompact", "pre-compact"),
    HookSpec("Stop", "stop"),
    HookSpec("SessionEnd", "session-end"),
)
# Gemini CLI copies Claude Code's layout and payload (geminicli.com/docs/hooks/reference) under
# its own names: BeforeAgent follows a submitted prompt, PreCompress precedes compaction,
# AfterAgent ends a turn; its edit tools are write_file and replace, its shell run_shell_command.
_GEMINI_HOOKS = (
    HookSpec("SessionStart", "session-start"),
    HookSpec("BeforeAgent", "prompt"),
    HookSpec("AfterTool", "post-edit", "write_file|replace"),
    HookSpec("AfterTool", "post-bash", "run_shell_command"),
    HookSpec("PreCompress", "pre-compact"),
    HookSpec("AfterAgent", "stop"),
    HookSpec("SessionEnd", "session-end"),
)
# Codex CLI runs Claude Code's layout from ~/.codex/hooks.json (developers.openai.com/codex/
# hooks): its shell tool is Bash, its file edits go through apply_patch. It has no SessionEnd:
# a session that ended unseen gets its checkpoint at a later session start.
_CODEX_HOOKS = (
    HookSpec("SessionStart", "session-start"),
    HookSpec("UserPromptSubmit", "prompt"),
    HookSpec("PostToolUse", "post-edit", "apply_patch"),
    HookSpec("PostToolUse", "post-bash", "Bash"),
    HookSpec("PreCompact", "pre-compact"),
    HookSpec("Stop", "stop"),
)
# Cursor's beforeSubmitPrompt and afterFileEdit cannot add context; sessionStart can.
_CURSOR_HOOKS = (HookSpec("sessionStart", "session-start"),)

HOOK_TIMEOUT_S = 10

# geminicli.com/docs/cli/trusted-folders: with security.folderTrust.enabled, an untrusted
# folder runs in safe mode, where no MCP server connects (a user-scope one neither).
_GEMINI_TRUST = (
    "Gemini CLI connects no MCP server in a folder it does not trust (when "
    "security.folderTrust is enabled): trust each project folder in its dialog or with "
    "/permissions (kept in ~/.gemini/trustedFolders.json); headless runs need --skip-trust "
    "or GEMINI_TRUST_WORKSPACE=true."
)


def _claude_handler(_spec: HookSpec, command: str) -> dict[str, Any]:
    return {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}


def _gemini_handler(spec: HookSpec, command: str) -> dict[str, Any]:
    return {
        "name": f"contextd-{spec.contextd_event}",
        "type": "command",
        "command": command,
        "timeout": HOOK_TIMEOUT_S * 1000,  # Gemini counts milliseconds
    }


def _cursor_handler(_spec: HookSpec, command: str) -> dict[str, Any]:
    return {"command": command}


AGENTS: tuple[Agent, ...] = (
    Agent(
        "claude",
        "Claude Code",
        (".claude", ".claude.json"),
        ("claude",),
        (
            # User scope of `claude mcp add --scope user`: top-level "mcpServers" of ~/.claude.json.
            Target(".claude.json", Format.JSON, (McpJsonWriter(style="claude", remote="claude"),)),
            Target(
                ".claude/settings.json",
                Format.JSON,
                (HookWriter(_CLAUDE_HOOKS, _claude_handler),),
            ),
        ),
        plugin_settings=".claude/settings.json",
        plugin_project_settings=(".claude/settings.json", ".claude/settings.local.json"),
    ),
    Agent(
        "codex",
        "Codex CLI",
        (".codex",),
        ("codex",),
        (
            Target(".codex/config.toml", Format.TOML, (McpTomlWriter(),)),
            Target(".codex/hooks.json", Format.JSON, (HookWriter(_CODEX_HOOKS, _claude_handler),)),
        ),
    ),
    Agent(
        "cursor",
        "Cursor",
        (".cursor",),
        ("cursor", "cursor-agent"),
        (
            Target(".cursor/mcp.json", Format.JSON, (McpJsonWriter(remote="cursor"),)),
            Target(
                ".cursor/hooks.json",
                Format.JSON,
                (HookWriter(_CURSOR_HOOKS, _cursor_handler, grouped=False, version=1),),
            ),
        ),
    ),
    Agent(
        "gemini",
        "Gemini CLI",
        (".gemini",),
        ("gemini",),
        (
            Target(
                ".gemini/settings.json",
                Format.JSON,
                (McpJsonWriter(remote="gemini"), HookWriter(_GEMINI_HOOKS, _gemini_handler)),
            ),
        ),
        note=_GEMINI_TRUST,
    ),
    Agent(
        "windsurf",
        "Windsurf",
        (".codeium/windsurf",),
        ("windsurf",),
        (
            Target(
                ".codeium/windsurf/mcp_config.json",
                Format.JSON,
                (McpJsonWriter(style="windsurf", remote="windsurf"),),
            ),
        ),
    ),
    Agent(
        "opencode",
        "opencode",
        (),
        ("opencode",),
        (
            Target(
                "opencode/opencode.json",
                Format.JSON,
                (McpJsonWriter(container="mcp", style="opencode", remote="opencode"),),
                base="config",
            ),
        ),
        config_markers=("opencode",),
    ),
    Agent(
        "claude-desktop",
        "Claude Desktop",
        (),
        (),
        (
            Target(
                "Claude/claude_desktop_config.json",
                Format.JSON,
                (McpJsonWriter(style="desktop"),),
                base="applications",
            ),
        ),
        app_markers=("Claude",),
    ),
)


def agent_named(name: str) -> Agent:
    for agent in AGENTS:
        if agent.name == name:
            return agent
    known = ", ".join(a.name for a in AGENTS)
    raise InvalidInputError(f"Unknown agent '{name}'; choose one of {known}, or all.")


def detect(places: Places, names: Sequence[str] = ()) -> list[Agent]:
    """The agents named (`all` is every one), or, with no names, those installed here."""
    if "all" in names:
        return list(AGENTS)
    if names:
        return [agent_named(n) for n in dict.fromkeys(names)]
    return [agent for agent in AGENTS if agent.installed(places)]
