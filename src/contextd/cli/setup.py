"""`contextd setup`: wire the MCP server and hooks into the agents installed here."""

import difflib
import os
import re
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click
from msgspec.structs import replace

from contextd.agents.catalog import AGENTS, Places
from contextd.agents.setup import Action, FileChange, SetupReport, find_executable, run_setup
from contextd.agents.writers import Launcher
from contextd.cli._context import common_options, state
from contextd.cli._output import emit, table
from contextd.config import resolve_home
from contextd.errors import ConfigError, InvalidInputError
from contextd.text.printer import echo, style

__all__ = ["COMMANDS", "places_here"]

_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_AGENT_CHOICES = [agent.name for agent in AGENTS] + ["all"]
_COLOUR = {
    Action.ADDED: "green",
    Action.UPDATED: "cyan",
    Action.REMOVED: "yellow",
    Action.UNCHANGED: "bright_black",
}


def places_here() -> Places:
    home = Path.home()
    config_home = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    if sys.platform == "darwin":
        app_data: Path | None = home / "Library" / "Application Support"
    elif sys.platform == "win32":
        app_data = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
    else:
        app_data = None  # the XDG config folder (where Claude Desktop's Linux builds look)
    return Places(home, Path(config_home), os.environ.get("PATH"), app_data)


def _launcher(executable: str) -> Launcher:
    """The store and project setup was run for: written where an agent needs them."""
    chosen = state().home or os.environ.get("CONTEXTD_HOME")
    home = str(resolve_home(state().home))
    return Launcher(executable, home, bool(chosen), state().project)


@click.command()
@click.option(
    "--agent",
    "agents",
    multiple=True,
    type=click.Choice(_AGENT_CHOICES),
    help="Set up this agent (repeatable; default: every agent installed here).",
)
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.option("--remove", is_flag=True, help="Take contextd's entries out again.")
@click.option(
    "--git-hooks",
    is_flag=True,
    help="Instead: install a pre-commit hook here refusing record files with a secret.",
)
@click.option(
    "--url",
    metavar="URL",
    help="Instead of a local server: the address of a `contextd serve` (https://…/mcp).",
)
@click.option(
    "--token-env",
    metavar="VAR",
    help="With --url: the environment variable holding your token (never written to a file).",
)
@common_options
def setup(
    agents: tuple[str, ...],
    dry_run: bool,
    remove: bool,
    git_hooks: bool,
    url: str | None,
    token_env: str | None,
) -> None:
    """Add contextd's MCP server and hooks to your agents' config files.

    Detects Claude Code, Codex CLI, Cursor, Gemini CLI, Windsurf, opencode and Claude Desktop
    (config folder or binary on PATH). Idempotent; every other setting (and comment) is kept;
    each changed file is backed up beside itself first. An agent whose file cannot be read is
    left alone and reported; the others are still set up (exit code 5 then).

    \b
    Examples:
      contextd setup                        # every agent installed here
      contextd setup --agent claude --dry-run
      contextd setup --agent all --remove
    """
    places = places_here()
    executable = find_executable(sys.argv[0], places.search_path)
    if git_hooks:
        from contextd.share.git_hooks import install_pre_commit

        # Not found by name (run as `python -m contextd`): this interpreter runs it.
        found = os.path.isabs(executable)
        hook = install_pre_commit(
            Path.cwd(), [executable] if found else [sys.executable, "-m", "contextd"]
        )
        emit(
            {"git_hook": hook.path, "action": hook.action},
            lambda: echo(f"Pre-commit hook {hook.action}: {hook.path}"),
        )
        return
    launcher = _launcher(executable)
    if url is not None or token_env is not None:
        launcher = replace(launcher, url=_served_url(url, token_env), token_env=token_env or "")
    report = run_setup(
        places, executable, names=agents, dry_run=dry_run, remove=remove, launcher=launcher
    )
    emit(_payload(report, places), lambda: _human(report, places))
    for failure in report.failures:  # one sentence per agent left alone, and a failing exit
        echo(f"{failure.agent}: {failure.message}", err=True)
    if report.failures:
        sys.exit(ConfigError.exit_code)


def _served_url(url: str | None, token_env: str | None) -> str:
    """--url, checked: an http(s) address, given with --token-env naming a variable."""
    if url is None or token_env is None:
        raise InvalidInputError(
            "Give --url and --token-env together: the server's address and the environment "
            "variable that holds your token."
        )
    if not _VARIABLE.fullmatch(token_env):
        raise InvalidInputError(
            f"--token-env {token_env!r} is not an environment variable name (letters, digits "
            "and _, not starting with a digit); name the variable, not the token."
        )
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username:
        raise InvalidInputError(
            f"--url {url!r} is not the http:// or https:// address of a server, without a user "
            "or password in it (like https://memory.example.com/mcp)."
        )
    return url


def _payload(report: SetupReport, places: Places) -> dict[str, Any]:
    return {
        "executable": report.executable,
        "dry_run": report.dry_run,
        "remove": report.remove,
        "changed": report.changed,
        "agents": [
            {
                "agent": agent.name,
                "note": _plugin_note(report, agent.name, places) or agent.note or None,
                "plugin": str(report.by_plugin[agent.name])
                if agent.name in report.by_plugin
                else None,
                "error": next((f.message for f in report.failures if f.agent == agent.name), None),
                "files": [
                    {
                        "path": str(change.path),
                        "action": str(change.action),
                        "what": list(change.what),
                        "backup": str(change.backup) if change.backup else None,
                    }
                    for change in report.files
                    if change.agent == agent.name
                ],
            }
            for agent in report.agents
        ],
    }


def _human(report: SetupReport, places: Places) -> None:
    rows = [
        [
            change.agent,
            style(_verb(change, report.dry_run), fg=_COLOUR[change.action]),
            _short(change.path, places),
            ", ".join(change.what),
        ]
        for change in report.files
    ]
    rows += [
        [failure.agent, style("failed", fg="red"), "", "left untouched (see below)"]
        for failure in report.failures
    ]
    table(rows, clip_column=None)
    if report.dry_run:
        for change in report.files:
            _diff(change, places)
        echo("Dry run: nothing was written.")
    elif not report.changed and not report.failures:
        echo("Nothing to change: every file is already as setup would leave it.")
    else:
        for change in report.files:
            if change.backup:
                echo(f"Backup of {_short(change.path, places)}: {change.backup.name}")
        if not report.remove:
            echo(f"Agents will run {report.executable}; restart them to pick it up.")
    if not report.remove:
        failed = {failure.agent for failure in report.failures}
        for agent in report.agents:
            note = _plugin_note(report, agent.name, places) or agent.note
            if note and agent.name not in failed:
                echo(style(f"{agent.label}: {note}", fg="yellow"))


def _plugin_note(report: SetupReport, agent: str, places: Places) -> str:
    enabling = report.by_plugin.get(agent)
    if enabling is None:
        return ""
    return (
        f"the contextd plugin is on ({_short(enabling, places)}) and wires the MCP server and "
        "hooks itself, so setup keeps no copy of its own (every hook would run twice)."
    )


def _verb(change: FileChange, dry_run: bool) -> str:
    if dry_run and change.changed:
        return "would be " + str(change.action)
    return str(change.action)


def _diff(change: FileChange, places: Places) -> None:
    if not change.changed:
        return
    name = _short(change.path, places)
    lines = difflib.unified_diff(
        change.before.splitlines(keepends=True),
        change.after.splitlines(keepends=True),
        fromfile=name,
        tofile=name,
    )
    for line in lines:
        colour = "green" if line.startswith("+") else "red" if line.startswith("-") else None
        echo(style(line.rstrip("\n"), fg=colour))


def _short(path: Path, places: Places) -> str:
    try:
        return "~/" + str(path.relative_to(places.home))
    except ValueError:
        return str(path)


COMMANDS = [setup]
