"""`contextd status`: the current project at a glance."""

from pathlib import Path
from typing import Any

import click
from msgspec.structs import asdict

from contextd.agents.wiring import AgentWiring, wiring
from contextd.app import App
from contextd.cli._context import common_options, get_app
from contextd.cli._output import KIND_HEADINGS, emit
from contextd.cli.setup import places_here
from contextd.clock import age
from contextd.core.reading.views import project_view, record_view
from contextd.core.recall.presentation import shown_name
from contextd.core.workspace.status import StatusReport
from contextd.models import Kind, Probe
from contextd.share.service import SharedView
from contextd.text.grammar import counted
from contextd.text.printer import echo, style

__all__ = ["COMMANDS"]


@click.command()
@common_options
def status() -> None:
    """Overview of the current project: git, what is stored, where work stopped, which agents
    are wired, and whether the embedding endpoint and the vector store answer.

    \b
    Examples:
      contextd status
      contextd status --project orbit --json
    """
    app = get_app()
    project = app.current_project()
    report = app.status(project)
    shared = app.shares.view(project) if project.checkout else None
    agents = wiring(places_here(), Path(project.checkout) if project.checkout else None)
    remotes = _remotes(app)
    payload = _payload(report, shared, agents) | {"remotes": remotes}
    emit(payload, lambda: _print(report, shared, agents, remotes))


def _remotes(app: App) -> list[dict[str, Any]]:
    """Each configured remote's last pull, and the scheduled pull's last try and next one."""
    from contextd.sync.schedule import next_due, read_results

    listed = app.remotes.list()
    if not listed:
        return []
    results = read_results(app.settings.home)
    sync = app.settings.sync
    every = sync.pull_every_s
    views = []
    for remote in listed:
        tried = results.get(remote.name)
        views.append(
            {
                "name": remote.name,
                "last_pull_at": remote.last_pull_at,
                "pull_every": sync.pull_every if every else None,
                "last_try": None if tried is None else asdict(tried) | {"summary": tried.summary()},
                "next_try_at": next_due(tried, every) if every else None,
            }
        )
    return views


def _payload(
    report: StatusReport, shared: SharedView | None, agents: list[AgentWiring]
) -> dict[str, Any]:
    checkpoint = report.last_checkpoint
    body = checkpoint.body if checkpoint else None
    payload: dict[str, Any] = {
        "project": project_view(report.project),
        "group": None
        if report.group is None
        else {"id": report.group.id, "slug": report.group.slug, "name": report.group.name},
        "git": None
        if report.git is None
        else {
            "branch": report.git.branch,
            "commit": report.git.short_sha,
            "dirty": report.git.dirty,
        },
        "counts": {k.value: report.counts.get(k, 0) for k in Kind},
        "last_checkpoint": None if checkpoint is None else record_view(checkpoint),
        "goal": getattr(body, "goal", "") or None,
        "next": list(getattr(body, "next", ())),
        "home": str(report.home),
        "index": asdict(report.index) | {"fix": report.index.fix},
        "waiting_review": report.waiting_review,
        "embeddings": asdict(report.reach.embeddings),
        "vectors": asdict(report.reach.vectors),
        "agents": [_agent_view(agent) for agent in agents],
    }
    if shared is not None:
        payload["shared"] = {
            "folder": shared.folder,
            "records": shared.records,
            "problems": [asdict(p) for p in shared.problems],
        }
    return payload


def _agent_view(agent: AgentWiring) -> dict[str, Any]:
    def entry(kind: str) -> dict[str, Any] | None:
        found = agent.entry(kind)
        if found is None:
            return None
        view = {"path": str(found.path), "command": found.program, "resolves": found.resolves}
        return view | ({"events": list(found.events)} if kind == "hooks" else {})

    return {
        "agent": agent.agent,
        "label": agent.label,
        "installed": agent.installed,
        "mcp": entry("mcp"),
        "hooks": entry("hooks"),
        "plugin": str(agent.plugin) if agent.plugin else None,
        "problem": agent.problem,
    }


def _print(
    report: StatusReport,
    shared: SharedView | None,
    agents: list[AgentWiring],
    remotes: list[dict[str, Any]],
) -> None:
    echo(style("contextd", bold=True))
    echo("─" * 33)
    for label, value in _rows(report, shared) + _agent_rows(agents) + _remote_rows(remotes):
        echo(f"{label:<13}{value}")
    warnings = [
        f"not taken in: {shown_name(p.path)}: {shown_name(p.reason, 400)}"
        for p in (shared.problems if shared else [])
    ]
    index = report.index
    if index.note:
        warnings.append(f"note: {index.note}")
    warnings += [
        f"{agent.label}: {shown_name(agent.problem, 400)}" for agent in agents if agent.problem
    ]
    if index.fix:
        warnings.append(f"run `{index.fix}` to bring the index up to date")
    for warning in warnings:
        echo(style(warning, fg="yellow"))
    _print_where_work_stopped(report)


def _rows(report: StatusReport, shared: SharedView | None) -> list[tuple[str, str]]:
    rows = [("Project", report.project.name)]
    if report.group is not None:
        rows.append(("Group", f"{report.group.name} ({report.group.slug}): its records apply here"))
    if report.git:
        git = report.git
        where = f"{git.branch or '?'} @ {git.short_sha or '-'} ({git.dirty} dirty)"
        rows.append(("Branch", where))
    rows += [(KIND_HEADINGS[k], str(report.counts.get(k, 0))) for k in Kind]
    index = report.index
    if index.provider == "none":
        rows.append(("Semantic", "off (full-text only)"))
    else:
        mark = _mark(index.fix is None and report.reach.embeddings.ok)
        rows.append(("Semantic", f"{mark} {index.embedded}/{index.records} {index.provider}"))
        rows.append(("Embeddings", _probe_cell(report.reach.embeddings)))
        rows.append(("Vectors", f"{index.backend}: {_probe_cell(report.reach.vectors)}"))
    if shared is not None:
        rows.append(("Shared", f"{counted(shared.records, 'record')} in {shared.folder}"))
    if report.waiting_review:
        rows.append(("Review", f"{report.waiting_review} waiting (contextd review)"))
    return rows


def _mark(good: bool) -> str:
    return style("✓", fg="green") if good else style("!", fg="yellow")


def _probe_cell(probe: Probe) -> str:
    if probe.state == "unchecked":
        return f"{style('?', fg='yellow')} not checked: {probe.detail}"
    return f"{_mark(probe.ok)} {shown_name(probe.detail, 300)}"


def _agent_rows(agents: list[AgentWiring]) -> list[tuple[str, str]]:
    """One line per agent: its MCP entry and hooks, each marked by whether its program
    resolves; an installed agent without our entries names the command that wires it."""
    rows: list[tuple[str, str]] = []
    for agent in agents:
        parts = [f"{_mark(not agent.entries)} the contextd plugin"] if agent.plugin else []
        for kind, name in (("mcp", "MCP"), ("hooks", "hooks")):
            entry = agent.entry(kind)
            if entry is None:
                continue
            what = name if kind == "mcp" else f"hooks ({', '.join(entry.events)})"
            found = "" if entry.resolves else f": {shown_name(entry.program)} not found"
            parts.append(f"{_mark(entry.resolves)} {what}{found}")
        if not parts:
            parts.append(f"not wired: run `contextd setup --agent {agent.agent}`")
        elif agent.plugin and agent.entries and agent.plugin_in_project:
            parts.append(f"twice here: the plugin is on in {agent.plugin}")
        elif agent.plugin and agent.entries:
            parts.append(f"twice: run `contextd setup --agent {agent.agent}`")
        rows.append(("Agents" if not rows else "", f"{agent.label}: {'; '.join(parts)}"))
    if not rows:
        rows.append(("Agents", "none found: `contextd setup --agent NAME` wires one"))
    return rows


def _remote_rows(remotes: list[dict[str, Any]]) -> list[tuple[str, str]]:
    rows = []
    for index, remote in enumerate(remotes):
        pulled = remote["last_pull_at"]
        line = f"{remote['name']}: pulled {age(pulled) if pulled else 'never'}"
        every, tried = remote["pull_every"], remote["last_try"]
        if every and tried:
            line += f"; every {every}, tried {age(tried['at'])}: {tried['summary']}"
        elif every:
            line += f"; every {every}, by the daemon (none has tried yet)"
        rows.append(("Remotes" if index == 0 else "", line))
    return rows


def _print_where_work_stopped(report: StatusReport) -> None:
    checkpoint = report.last_checkpoint
    if checkpoint is None:
        return
    echo(
        f"\n{style('Last checkpoint', bold=True)}\n{checkpoint.title} "
        f"({age(checkpoint.created_at)})"
    )
    body = checkpoint.body
    goal = getattr(body, "goal", "")
    if goal:
        echo(f"\n{style('Current goal', bold=True)}\n{goal}")
    steps = list(getattr(body, "next", ()))
    if steps:
        echo(f"\n{style('Next', bold=True)}")
        for step in steps:
            echo(f"- {step}")


COMMANDS = [status]
