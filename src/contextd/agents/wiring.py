"""Which agents are wired to contextd, and how: read back from their config files what
`contextd setup` writes there (the writers say what is ours), whether the program each
entry starts can be found, and whether contextd's own plugin is on."""

import os
import shutil
from pathlib import Path

from msgspec import Struct

from contextd.agents.catalog import AGENTS, Agent, Places
from contextd.agents.files import parse, read_config
from contextd.agents.plugin import enabled_by
from contextd.errors import ContextdError

__all__ = ["AgentWiring", "Entry", "wiring"]


class Entry(Struct, frozen=True):
    """One of our entries in an agent's file: the MCP server, or hooks on `events`."""

    kind: str  # "mcp" or "hooks"
    path: Path
    program: str
    resolves: bool  # the program exists (an absolute path) or is on PATH
    events: tuple[str, ...] = ()


class AgentWiring(Struct, frozen=True):
    agent: str
    label: str
    installed: bool
    entries: tuple[Entry, ...]
    problem: str | None = None  # a file of the agent that could not be read
    plugin: Path | None = None  # the settings file turning contextd's plugin on, if one does
    plugin_in_project: bool = False  # that file is the project's, not the user's

    def entry(self, kind: str) -> Entry | None:
        return next((e for e in self.entries if e.kind == kind), None)


def wiring(places: Places, checkout: Path | None = None) -> list[AgentWiring]:
    """Every agent installed here or holding an entry of ours, in the catalogue's order;
    with the project `checkout` whose own settings may turn the plugin on or off."""
    found = [_agent_wiring(agent, places, checkout) for agent in AGENTS]
    return [w for w in found if w.installed or w.entries or w.problem or w.plugin]


def _agent_wiring(agent: Agent, places: Places, checkout: Path | None) -> AgentWiring:
    entries: list[Entry] = []
    problem = None
    for target in agent.targets:
        path = target.path(places)
        try:
            text = read_config(path)
            if text is None:
                continue
            data = parse(path, text, target.fmt).data
        except ContextdError as exc:
            problem = str(exc)
            continue
        for writer in target.writers:
            wired = writer.wired(data)
            if wired is not None:
                resolves = _resolves(wired.program, places.search_path)
                entries.append(Entry(wired.kind, path, wired.program, resolves, wired.events))
    installed = agent.installed(places)
    try:
        plugin = enabled_by(agent, places, checkout)
    except ContextdError as exc:
        problem, plugin = problem or str(exc), None
    in_project = plugin is not None and plugin != places.home / agent.plugin_settings
    return AgentWiring(
        agent.name, agent.label, installed, tuple(entries), problem, plugin, in_project
    )


def _resolves(program: str, search_path: str | None) -> bool:
    if not program:
        return False
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program).expanduser()
        return path.is_file() and os.access(path, os.X_OK)
    return shutil.which(program, path=search_path) is not None
