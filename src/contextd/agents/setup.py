"""`contextd setup`: plan every file's change first, then back up and write the changed ones.

Each agent stands alone: its files are all planned before any of them is written, and a file
that cannot be parsed (or written) stops that agent only, with a sentence in the report; the
other agents are set up all the same.
"""

import json
import os
import shutil
from collections.abc import Callable, Sequence
from enum import StrEnum
from functools import partial
from pathlib import Path

import tomlkit
from msgspec import Struct, field
from msgspec.structs import replace

from contextd.agents.catalog import AGENTS, Agent, Places, Target, detect
from contextd.agents.files import (
    Format,
    Parsed,
    backup,
    parse,
    read_config,
    render,
    write_atomically,
)
from contextd.agents.plugin import enabled_by
from contextd.agents.writers import Launcher, McpTomlWriter, ShapeError, Writer
from contextd.errors import ConfigError, ContextdError, NotFoundError

__all__ = [
    "Action",
    "AgentFailure",
    "FileChange",
    "SetupReport",
    "find_executable",
    "run_setup",
]


class Action(StrEnum):
    ADDED = "added"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    REMOVED = "removed"


class FileChange(Struct, frozen=True):
    agent: str
    path: Path
    action: Action
    what: tuple[str, ...]  # the entries that changed (or would), e.g. "MCP server contextd"
    before: str
    after: str
    backup: Path | None = None

    @property
    def changed(self) -> bool:
        return self.action is not Action.UNCHANGED


class AgentFailure(Struct, frozen=True):
    """An agent setup left alone, and the one sentence that says why."""

    agent: str
    message: str


class SetupReport(Struct, frozen=True):
    executable: str
    agents: list[Agent]
    files: list[FileChange] = field(default_factory=list)
    dry_run: bool = False
    remove: bool = False
    failures: list[AgentFailure] = field(default_factory=list)
    by_plugin: dict[str, Path] = field(default_factory=dict)  # agent -> file enabling the plugin

    @property
    def changed(self) -> bool:
        return any(change.changed for change in self.files)


def find_executable(argv0: str, search_path: str | None) -> str:
    """The absolute path of this contextd, so agents with another PATH still start it."""
    running = Path(argv0)
    if running.name in {"contextd", "contextd.exe"} and running.is_file():
        return os.path.abspath(running)
    found = shutil.which("contextd", path=search_path)
    return os.path.abspath(found) if found else "contextd"


def run_setup(
    places: Places,
    executable: str,
    *,
    names: Sequence[str] = (),
    dry_run: bool = False,
    remove: bool = False,
    launcher: Launcher | None = None,
) -> SetupReport:
    """Wire (or with `remove`, unwire) the agents named, or those installed here, to start
    `executable` (with `launcher`'s home and project where an agent needs them written)."""
    agents = detect(places, names)
    if not agents:
        known = "|".join(agent.name for agent in AGENTS)
        raise NotFoundError(
            f"No supported agent was found in {places.home} or on PATH; name one with "
            f"--agent {known} (or all)."
        )
    launcher = launcher or Launcher(executable)
    files: list[FileChange] = []
    failures: list[AgentFailure] = []
    by_plugin: dict[str, Path] = {}
    if launcher.url and not remove:
        agents, failures = _taking_urls(agents, names)
    for agent in agents:
        targets = agent.targets
        if launcher.url and not remove:  # hooks run the local store: not for a remote server
            targets = tuple(t for t in targets if not all(_is_hooks(w) for w in t.writers))
        try:
            plugin = None if launcher.url or remove else enabled_by(agent, places)
            if plugin is not None:  # the plugin wires it: a second copy would run hooks twice
                by_plugin[agent.name] = plugin
            unwire = remove or plugin is not None
            planned = [_plan(agent.name, t, places, launcher, unwire) for t in targets]
            files += planned if dry_run else [_write(change) for change in planned]
        except ContextdError as exc:
            failures.append(AgentFailure(agent.name, str(exc)))
    return SetupReport(executable, agents, files, dry_run, remove, failures, by_plugin)


def _taking_urls(
    agents: list[Agent], names: Sequence[str]
) -> tuple[list[Agent], list[AgentFailure]]:
    """The agents whose config file can name an HTTP server; one named on the command line
    that cannot is reported (one merely detected is left out)."""
    able = [a for a in agents if any(_remote_capable(w) for t in a.targets for w in t.writers)]
    refused = [
        AgentFailure(
            a.name,
            f"{a.label} takes a remote MCP server only in its own settings (Connectors), not "
            "in a config file; add the URL there.",
        )
        for a in agents
        if a not in able and a.name in names
    ]
    return able, refused


def _is_hooks(writer: Writer) -> bool:
    return writer.what.startswith("hooks")


def _remote_capable(writer: Writer) -> bool:
    return bool(getattr(writer, "remote", None)) or isinstance(writer, McpTomlWriter)


def _plan(
    agent: str, target: Target, places: Places, launcher: Launcher, remove: bool
) -> FileChange:
    path = target.path(places)
    text = read_config(path)
    if text is None:
        if remove:
            return FileChange(agent, path, Action.UNCHANGED, (), "", "")
        text = ""
    parsed = parse(path, text, target.fmt)
    had_ours = _strips_anything(path, text, target)
    what = []
    for writer in target.writers:
        if launcher.url and not remove and _is_hooks(writer):
            continue  # hooks run the local store: not for an agent on a remote server
        before = _snapshot(parsed, target.fmt)
        if remove:
            _edit(path, writer, partial(writer.strip, parsed.data))
        else:
            _edit(path, writer, partial(writer.install, parsed.data, launcher))
        if _snapshot(parsed, target.fmt) != before:
            what.append(writer.what)
    if not what:
        return FileChange(agent, path, Action.UNCHANGED, (), text, text)
    action = Action.REMOVED if remove else Action.UPDATED if had_ours else Action.ADDED
    return FileChange(agent, path, action, tuple(what), text, render(parsed, target.fmt))


def _strips_anything(path: Path, text: str, target: Target) -> bool:
    parsed = parse(path, text, target.fmt)
    before = _snapshot(parsed, target.fmt)
    for writer in target.writers:
        _edit(path, writer, partial(writer.strip, parsed.data))
    return _snapshot(parsed, target.fmt) != before


def _edit(path: Path, writer: Writer, step: Callable[[], None]) -> None:
    try:
        step()
    except ShapeError as exc:
        raise ConfigError(
            f"{path}: '{exc.key}' is not an object as {writer.what} needs; contextd setup "
            "left the file untouched, fix it and run setup again."
        ) from None


def _snapshot(parsed: Parsed, fmt: Format) -> str:
    """Text that differs exactly when the document does (key order counts, layout does not)."""
    if fmt is Format.TOML:
        return tomlkit.dumps(parsed.data)
    return json.dumps(parsed.data, ensure_ascii=False)


def _write(change: FileChange) -> FileChange:
    if not change.changed:
        return change
    try:
        saved = backup(change.path) if change.path.is_file() else None
        write_atomically(change.path, change.after.encode("utf-8"))
    except OSError as exc:
        raise ConfigError(
            f"{change.path} cannot be written ({exc.strerror}); check the permissions of it "
            "and its folder, then run contextd setup again."
        ) from None
    return replace(change, backup=saved)
