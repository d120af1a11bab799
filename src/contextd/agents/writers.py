"""Small in-place edits of parsed agent configs: our MCP server entry, and our hook entries.

Every writer has two halves: `install` puts our entries in (replacing stale ones of ours, keeping
everything else), `strip` takes exactly ours out. Entries are ours by the MCP server name
`contextd`, or, for hooks, by a command that runs `contextd hook ...`.
"""

import json
import shlex
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from pathlib import PurePath
from typing import Any, Protocol

import tomlkit
from msgspec import Struct
from tomlkit.items import InlineTable

__all__ = [
    "SERVER_NAME",
    "HookSpec",
    "HookWriter",
    "Launcher",
    "McpJsonWriter",
    "McpTomlWriter",
    "ShapeError",
    "Wired",
    "Writer",
]

SERVER_NAME = "contextd"
_SERVE = ["mcp", "serve"]
# What Codex must forward to contextd's server from its own environment (it passes only HOME,
# LOGNAME, PATH, SHELL, USER, LANG, LC_ALL, TERM, TMPDIR and TZ unless told).
_FORWARDED = ("CONTEXTD_HOME", "CONTEXTD_PROJECT")


class ShapeError(Exception):
    """A key we must edit holds something other than an object; the file is left alone."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class Launcher(Struct, frozen=True):
    """How an agent starts contextd: an absolute path when one is known, else `contextd`; and
    the home and project to hand it where the agent does not pass its environment on."""

    executable: str
    home: str = ""  # the store setup wired the agents to
    home_chosen: bool = False  # by --home or $CONTEXTD_HOME (else the default, ~/.contextd)
    project: str | None = None  # named by --project
    # `setup --url`: the agent reaches a `contextd serve` at this address instead, with the
    # bearer token read from the environment variable `token_env` (never written down).
    url: str = ""
    token_env: str = ""

    def pinned(self, *, always: bool = False) -> dict[str, str]:
        """CONTEXTD_HOME (when chosen, or `always`) and CONTEXTD_PROJECT (when named)."""
        env = {"CONTEXTD_HOME": self.home} if self.home and (always or self.home_chosen) else {}
        return env | ({"CONTEXTD_PROJECT": self.project} if always and self.project else {})

    def argv(self, *args: str) -> list[str]:
        return [self.executable, *args]

    def shell(self, *args: str) -> str:
        return shlex.join(self.argv(*args))

    def authorization(self, reference: str) -> dict[str, str]:
        """The Authorization header naming the token's variable as the agent spells a
        reference to one (`${VAR}`, `${env:VAR}`, `{env:VAR}`)."""
        return {"Authorization": "Bearer " + reference.format(self.token_env)}


# Each agent's HTTP entry: the key holding the URL, the entry's fixed keys, and how its config
# refers to an environment variable (the token is never written into the file).
_REMOTE: dict[str, tuple[str, dict[str, Any], str]] = {
    "claude": ("url", {"type": "http"}, "${{{}}}"),  # Claude Code's ~/.claude.json
    "cursor": ("url", {}, "${{env:{}}}"),
    "gemini": ("httpUrl", {}, "${{{}}}"),
    "windsurf": ("serverUrl", {}, "${{env:{}}}"),
    "opencode": ("url", {"type": "remote", "enabled": True}, "{{env:{}}}"),
}
# What a stdio entry holds that an HTTP one must not (and the other way round).
_LOCAL_KEYS = ("type", "command", "args", "env", "enabled")
_REMOTE_KEYS = ("url", "httpUrl", "serverUrl", "headers")


class Wired(Struct, frozen=True):
    """What of ours a config file holds: our MCP entry, or our hooks on these agent events,
    and the program the entry starts ('' when the entry names none)."""

    kind: str  # "mcp" or "hooks"
    program: str
    events: tuple[str, ...] = ()


class Writer(Protocol):
    @property
    def what(self) -> str:
        """What it wires, for the report: "MCP server contextd", "hooks SessionStart, ..."."""
        ...

    def install(self, data: MutableMapping[str, Any], launcher: Launcher) -> None: ...

    def strip(self, data: MutableMapping[str, Any]) -> None: ...

    def wired(self, data: Mapping[str, Any]) -> Wired | None:
        """Our entries in `data`, if it holds any."""
        ...


def _object(data: MutableMapping[str, Any], key: str, *, create: bool) -> Any:
    value = data.get(key)
    if value is None:
        if not create:
            return None
        value = data[key] = {}
    if not isinstance(value, MutableMapping):
        raise ShapeError(key)
    return value


def _tail(old: object, start: int) -> list[Any]:
    """Arguments a user added after `mcp serve` (e.g. --read-only), kept across updates."""
    if isinstance(old, list) and old[start : start + 2] == _SERVE:
        return list(old[start + 2 :])
    return []


class McpJsonWriter(Struct, frozen=True):
    """`{container: {"contextd": entry}}`; the keys a user added to our entry are kept."""

    container: str = "mcpServers"
    # "stdio": command + args; "claude": also type/env; "opencode": argv; "desktop": also env
    # with the home and project (Claude Desktop starts servers from / with a bare environment);
    # "windsurf": also env with a chosen home (an app started outside the shell that set it)
    style: str = "stdio"
    what: str = "MCP server contextd"
    remote: str = ""  # the agent's HTTP entry (a key of _REMOTE); '' when it takes none

    def install(self, data: MutableMapping[str, Any], launcher: Launcher) -> None:
        servers = _object(data, self.container, create=True)
        old = servers.get(SERVER_NAME)
        old = dict(old) if isinstance(old, MutableMapping) else {}
        if launcher.url:
            kept = {k: v for k, v in old.items() if k not in _LOCAL_KEYS + _REMOTE_KEYS}
            servers[SERVER_NAME] = kept | self._remote_entry(launcher)
            return
        kept = {k: v for k, v in old.items() if k not in _REMOTE_KEYS}
        servers[SERVER_NAME] = kept | self._entry(kept, launcher)

    def _remote_entry(self, launcher: Launcher) -> dict[str, Any]:
        url_key, fixed, reference = _REMOTE[self.remote]
        return fixed | {url_key: launcher.url, "headers": launcher.authorization(reference)}

    def _entry(self, old: dict[str, Any], launcher: Launcher) -> dict[str, Any]:
        if self.style == "opencode":
            command = launcher.argv(*_SERVE, *_tail(old.get("command"), 1))
            return {"type": "local", "command": command, "enabled": old.get("enabled", True)}
        entry = {"command": launcher.executable, "args": [*_SERVE, *_tail(old.get("args"), 0)]}
        if self.style == "claude":  # what `claude mcp add --scope user` writes
            return {"type": "stdio"} | entry | {"env": old.get("env", {})}
        if self.style in ("desktop", "windsurf"):
            pinned = launcher.pinned(always=self.style == "desktop")
            env = old.get("env")
            mine = dict(env) if isinstance(env, dict) else {}
            return entry | ({"env": mine | pinned} if pinned or self.style == "desktop" else {})
        return entry

    def wired(self, data: Mapping[str, Any]) -> Wired | None:
        servers = data.get(self.container)
        entry = servers.get(SERVER_NAME) if isinstance(servers, Mapping) else None
        if not isinstance(entry, Mapping):
            return None
        command = entry.get("command")
        if command is None and any(key in entry for key in _REMOTE_KEYS):
            return Wired("mcp", "")  # an HTTP entry starts no program
        if isinstance(command, list):  # opencode: the whole argv
            command = command[0] if command else ""
        return Wired("mcp", command if isinstance(command, str) else "")

    def strip(self, data: MutableMapping[str, Any]) -> None:
        servers = _object(data, self.container, create=False)
        if servers is None or SERVER_NAME not in servers:
            return
        del servers[SERVER_NAME]
        if not servers:
            del data[self.container]


class McpTomlWriter(Struct, frozen=True):
    """Codex's `[mcp_servers.contextd]` table, edited with tomlkit so comments survive."""

    what: str = "MCP server contextd"

    def install(self, data: MutableMapping[str, Any], launcher: Launcher) -> None:
        servers = data.get("mcp_servers")
        created = servers is None
        if servers is None:
            servers = data["mcp_servers"] = tomlkit.table(is_super_table=True)
        if not isinstance(servers, MutableMapping):
            raise ShapeError("mcp_servers")
        entry = servers.get(SERVER_NAME)
        if launcher.url:  # Codex's streamable HTTP entry, its token from the environment
            if not isinstance(entry, MutableMapping):
                entry = servers[SERVER_NAME] = tomlkit.table()
            for key in ("command", "args", "env", "env_vars"):
                entry.pop(key, None)
            entry["url"] = launcher.url
            entry["bearer_token_env_var"] = launcher.token_env
            return
        if not isinstance(entry, MutableMapping):
            servers[SERVER_NAME] = self._table(servers, launcher, blank_after=not created)
            return
        for key in ("url", "bearer_token_env_var"):
            entry.pop(key, None)
        args = [*_SERVE, *_tail(_plain(entry.get("args")), 0)]
        for key, value in (("command", launcher.executable), ("args", args)):
            if _plain(entry.get(key)) != value:  # untouched values keep their layout
                entry[key] = value
        self._pass_environment(entry, launcher)

    @staticmethod
    def _pass_environment(entry: MutableMapping[str, Any], launcher: Launcher) -> None:
        """Codex hands an MCP server only HOME, PATH, USER and a few more: name ours in
        `env_vars` (forwarded from Codex's environment) or pin them in `env`."""
        pinned = launcher.pinned()
        env = _plain(entry.get("env"))
        env = dict(env) if isinstance(env, dict) else {}
        if pinned and env != env | pinned:
            entry["env"] = _inline(env | pinned)
        names = _plain(entry.get("env_vars"))
        names = list(names) if isinstance(names, list) else []
        wanted = names + [n for n in _FORWARDED if n not in names and n not in pinned]
        if wanted != names:
            entry["env_vars"] = wanted

    @classmethod
    def _table(cls, servers: object, launcher: Launcher, *, blank_after: bool) -> Any:
        fresh: dict[str, Any] = {"command": launcher.executable, "args": [*_SERVE]}
        cls._pass_environment(fresh, launcher)
        if isinstance(servers, InlineTable):  # mcp_servers = { ... } holds inline tables only
            inline = tomlkit.inline_table()
            inline.update(fresh)
            return inline
        table = tomlkit.table()
        for key, value in fresh.items():
            table.add(key, _inline(value) if isinstance(value, dict) else value)
        if blank_after:  # inserted among the user's tables: keep one blank line before the next
            table.add(tomlkit.nl())
        return table

    def wired(self, data: Mapping[str, Any]) -> Wired | None:
        servers = data.get("mcp_servers")
        entry = servers.get(SERVER_NAME) if isinstance(servers, Mapping) else None
        if not isinstance(entry, Mapping):
            return None
        command = _plain(entry.get("command"))
        return Wired("mcp", command if isinstance(command, str) else "")

    def strip(self, data: MutableMapping[str, Any]) -> None:
        servers = data.get("mcp_servers")
        if not isinstance(servers, MutableMapping) or SERVER_NAME not in servers:
            return
        del servers[SERVER_NAME]
        if not servers:
            del data["mcp_servers"]


def _inline(values: dict[str, str]) -> Any:
    """`{ KEY = "value" }` on the entry's own line, as Codex's documentation writes `env`."""
    table = tomlkit.inline_table()
    table.update(values)
    return table


def _plain(value: object) -> Any:
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


class HookSpec(Struct, frozen=True):
    """One agent event wired to one `contextd hook EVENT`."""

    agent_event: str
    contextd_event: str
    matcher: str | None = None


def _program(handler: Mapping[str, Any]) -> str:
    """The program a hook handler of ours runs (the first word of its command)."""
    return shlex.split(handler["command"])[0]


def is_ours(handler: object) -> bool:
    """A hook handler whose command runs `contextd hook ...` (any path to contextd)."""
    if not isinstance(handler, MutableMapping):
        return False
    command = handler.get("command")
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return (
        len(words) >= 2
        and PurePath(words[0]).name in {"contextd", "contextd.exe"}
        and words[1] == "hook"
    )


class HookWriter(Struct, frozen=True):
    """Hook entries under `hooks.<Event>`.

    grouped=True is Claude Code's layout, which Gemini CLI copies:
    `{"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", ...}]}]}}`.
    grouped=False is Cursor's: `{"version": 1, "hooks": {"sessionStart": [{"command": ...}]}}`.
    """

    specs: tuple[HookSpec, ...]
    handler: Callable[[HookSpec, str], dict[str, Any]]
    grouped: bool = True
    version: int | None = None

    @property
    def what(self) -> str:
        return "hooks " + ", ".join(dict.fromkeys(spec.agent_event for spec in self.specs))

    def install(self, data: MutableMapping[str, Any], launcher: Launcher) -> None:
        wanted = [self._entry(spec, launcher) for spec in self.specs]
        if _canonical(self._ours(data)) == _canonical(wanted):
            return  # already exactly ours: leave order and layout alone
        self.strip(data)
        if self.version is not None and "version" not in data:
            data["version"] = self.version
        hooks = _object(data, "hooks", create=True)
        for (event, entry), spec in zip(wanted, self.specs, strict=True):
            groups = hooks.setdefault(event, [])
            if not isinstance(groups, list):
                raise ShapeError(f"hooks.{spec.agent_event}")
            groups.append(entry)

    def _entry(self, spec: HookSpec, launcher: Launcher) -> tuple[str, dict[str, Any]]:
        handler = self.handler(spec, launcher.shell("hook", spec.contextd_event))
        if not self.grouped:
            return spec.agent_event, handler
        group: dict[str, Any] = {} if spec.matcher is None else {"matcher": spec.matcher}
        return spec.agent_event, group | {"hooks": [handler]}

    def _ours(self, data: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        found = []
        for event, entry in self._entries(data):
            if self.grouped:
                mine = [h for h in entry.get("hooks", []) if is_ours(h)]
                found += [(event, _with_hooks(entry, [h])) for h in mine]
            elif is_ours(entry):
                found.append((event, dict(entry)))
        return found

    def wired(self, data: Mapping[str, Any]) -> Wired | None:
        ours = self._ours(data)
        if not ours:
            return None
        events = tuple(dict.fromkeys(event for event, _ in ours))
        first = ours[0][1]
        handler = first["hooks"][0] if self.grouped else first
        return Wired("hooks", _program(handler), events)

    def _entries(self, data: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
        hooks = data.get("hooks")
        if not isinstance(hooks, Mapping):
            return  # strip and install say what is wrong with it
        for event, entries in hooks.items():
            if isinstance(entries, list):  # Gemini keeps e.g. "disabled": [names] here
                yield from ((event, e) for e in entries if isinstance(e, MutableMapping))

    def strip(self, data: MutableMapping[str, Any]) -> None:
        hooks = _object(data, "hooks", create=False)
        if hooks is None:
            return
        removed = False
        for event in list(hooks):
            entries = hooks[event]
            if not isinstance(entries, list):
                continue
            kept = [e for e in (self._without_ours(e) for e in entries) if e is not None]
            if kept != entries:
                removed = True
                if kept:
                    hooks[event] = kept
                else:
                    del hooks[event]
        if removed and not hooks:
            del data["hooks"]
            if self.version is not None and data.get("version") == self.version and len(data) == 1:
                del data["version"]

    def _without_ours(self, entry: object) -> object | None:
        if not isinstance(entry, MutableMapping):
            return entry
        if not self.grouped:
            return None if is_ours(entry) else entry
        handlers = entry.get("hooks")
        if not isinstance(handlers, list) or not any(is_ours(h) for h in handlers):
            return entry
        kept = [h for h in handlers if not is_ours(h)]
        return _with_hooks(entry, kept) if kept else None


def _with_hooks(group: MutableMapping[str, Any], handlers: list[Any]) -> dict[str, Any]:
    return {key: (handlers if key == "hooks" else value) for key, value in group.items()}


def _canonical(entries: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return sorted(json.dumps(entry, sort_keys=True) for entry in entries)
