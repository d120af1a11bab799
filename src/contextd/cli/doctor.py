"""`contextd doctor`: checks the install, each problem with the command that fixes it.

It asks what `status` asks, through the same probes (the provider's and the vector index's,
agents/wiring for the agents' files), and adds what status does not: whether the model's
weights are the pinned ones and load, whether onnxruntime's graph is cached, whether the
daemon answers. It writes nothing: the store is opened read-only, and a missing home is
reported, not created.
"""

from collections.abc import Callable
from pathlib import Path
from typing import Literal

import click
from msgspec import Struct
from msgspec.structs import asdict

from contextd.agents.wiring import AgentWiring, wiring
from contextd.app import App, can_write_store
from contextd.cli._context import common_options, get_app, get_settings
from contextd.cli._output import emit
from contextd.cli.daemon import OUTDATED, ask_daemon, outdated
from contextd.cli.setup import places_here
from contextd.config import Settings
from contextd.core.workspace.local_model import INSTALL_HINT, local_model_health
from contextd.core.workspace.status import PROBE_TIMEOUT_S
from contextd.errors import ContextdError
from contextd.models import Probe
from contextd.text.printer import echo, style

__all__ = ["COMMANDS", "Finding", "checkup"]

State = Literal["ok", "warn", "fail", "skip"]


class Finding(Struct, frozen=True):
    check: str
    state: State  # "fail" makes doctor exit 1; "warn" works but could be better
    detail: str
    fix: str | None = None  # the command (or step) that fixes it


@click.command()
@common_options
def doctor() -> None:
    """Check the install: config, store, the local model and its graph cache, the daemon,
    the agents' files, and the embedding endpoint or vector server when configured. Says
    what to run for each problem; exits 1 when something is wrong.

    \b
    Examples:
      contextd doctor
      contextd doctor --json | jq '.checks[] | select(.state != "ok")'
    """
    findings = checkup()
    ok = all(f.state != "fail" for f in findings)
    emit({"ok": ok, "checks": [asdict(f) for f in findings]}, lambda: _print(findings))
    if not ok:
        click.get_current_context().exit(1)


def checkup() -> list[Finding]:
    """Every check, in the order a problem blocks the next: config, store, then the rest."""
    try:
        settings = get_settings()
    except ContextdError as exc:
        return [Finding("config", "fail", str(exc), "contextd config --check")]
    findings = [Finding("config", "ok", f"{settings.home / 'config.toml'} reads")]
    store, app = _store(settings)
    findings.append(store)
    findings += _model(settings)
    findings.append(_daemon(settings))
    findings += _agents(wiring(places_here(), _checkout(app)))
    if app is not None:
        findings += _reach(app)
    return findings


def _checkout(app: App | None) -> Path | None:
    """The attached folder the doctor runs in, whose own agent settings count too."""
    try:
        checkout = app.current_project().checkout if app is not None else None
    except ContextdError:
        return None
    return Path(checkout) if checkout else None


def _store(settings: Settings) -> tuple[Finding, App | None]:
    where = settings.store_location
    if not settings.on_server and not settings.db_path.is_file():
        return Finding("store", "fail", f"no store at {where}", "contextd init"), None
    try:
        app = get_app(read_only=True)
        app.index.state()  # one real query: the schema is there and readable
    except ContextdError as exc:
        fix = "check [store] url and that the server runs" if settings.on_server else None
        return Finding("store", "fail", str(exc), fix), None
    if not can_write_store(settings):
        fix = f"chmod -R u+w {settings.home}"
        return Finding("store", "fail", f"{where} cannot be written", fix), app
    what = "team server" if settings.on_server else "SQLite store"
    return Finding("store", "ok", f"{what} {where} opens and can be written"), app


def _model(settings: Settings) -> list[Finding]:
    provider = settings.embeddings.provider
    if provider != "local":
        detail = f"not used (embeddings.provider = {provider})"
        return [Finding("model", "skip", detail), Finding("graph cache", "skip", detail)]
    health = local_model_health(settings)
    if health.location is None:
        detail = "the local model is not installed, so vectors come from feature hashing"
        return [Finding("model", "fail", detail, INSTALL_HINT)]
    where = health.location.describe()
    if not health.pinned:
        detail = f"the weights {where} are not the pinned ones (damaged or replaced)"
        return [Finding("model", "fail", detail, f"{INSTALL_HINT} --force")]
    if health.load_error is not None:
        return [Finding("model", "fail", health.load_error, f"{INSTALL_HINT} --force")]
    found = [Finding("model", "ok", f"found {where}; a query embeds")]
    if health.graph_cached is None:
        found.append(Finding("graph cache", "skip", "no cache folder in the home"))
    elif health.graph_cached:
        found.append(Finding("graph cache", "ok", "onnxruntime's graph is built and cached"))
    else:
        detail = "onnxruntime's graph is not built yet (the daemon builds it, once, at start)"
        found.append(Finding("graph cache", "warn", detail, "contextd daemon start"))
    return found


def _daemon(settings: Settings) -> Finding:
    try:
        reply = ask_daemon(str(settings.home), "ping")
    except ContextdError as exc:
        return Finding("daemon", "fail", str(exc))  # the sentence says whose socket it is
    if reply is None:
        detail = "not running (hooks then recall by full text; commands start it when allowed)"
        return Finding("daemon", "warn", detail, "contextd daemon start")
    if outdated(reply):
        detail = f"running (pid {reply['pid']}) but {OUTDATED[0].lower()}{OUTDATED[1:]}"
        return Finding("daemon", "fail", detail, "contextd daemon stop && contextd daemon start")
    return Finding("daemon", "ok", f"running (pid {reply['pid']})")


def _agents(agents: list[AgentWiring]) -> list[Finding]:
    if not agents:
        detail = "no agent found on this machine"
        return [Finding("agents", "skip", detail, "contextd setup --agent NAME")]
    return [_agent(agent) for agent in agents]


def _agent(agent: AgentWiring) -> Finding:
    name = f"agent {agent.agent}"
    setup = f"contextd setup --agent {agent.agent}"
    if agent.problem:
        return Finding(name, "fail", agent.problem, f"fix the file, then `{setup}`")
    if agent.plugin is not None and agent.entries and agent.plugin_in_project:
        detail = (
            f"{agent.label} runs contextd twice in this project: {agent.plugin} turns the "
            "contextd plugin on here and setup's entries wire every project, so every hook "
            "runs twice"
        )
        fix = (
            f"turn the plugin off in {agent.plugin}, or `{setup} --remove` if every project has it"
        )
        return Finding(name, "warn", detail, fix)
    if agent.plugin is not None and agent.entries:
        detail = (
            f"{agent.label} runs contextd twice: the contextd plugin is on and setup's "
            "entries are there too, so every hook runs twice"
        )
        return Finding(name, "warn", detail, f"{setup} (takes setup's entries out)")
    if agent.plugin is not None:
        return Finding(name, "ok", f"{agent.label}: wired by the contextd plugin")
    if not agent.entries:
        return Finding(name, "warn", f"{agent.label} is installed but not wired", setup)
    missing = [e for e in agent.entries if not e.resolves]
    if missing:
        programs = ", ".join(sorted({e.program for e in missing}))
        detail = f"{agent.label}'s entries run {programs}, which is not found"
        return Finding(name, "fail", detail, setup)
    kinds = " and ".join("MCP" if e.kind == "mcp" else "hooks" for e in agent.entries)
    return Finding(name, "ok", f"{agent.label}: {kinds} wired")


def _reach(app: App) -> list[Finding]:
    """The embedding endpoint and the vector store, by the probes `status` shows."""
    found = []
    reach = app.index.probe(PROBE_TIMEOUT_S)
    if app.settings.embeddings.provider not in ("local", "none"):
        found.append(_probe_finding("embeddings", reach.embeddings, "check embeddings.api_base"))
    if app.settings.vectors.backend != "sqlite" or reach.vectors.state == "failed":
        found.append(_probe_finding("vectors", reach.vectors, "check [vectors] url or path"))
    fix = app.index.state().fix
    if fix:
        found.append(Finding("index", "warn", "some records have no current vector", fix))
    return found


def _probe_finding(name: str, probe: Probe, fix: str) -> Finding:
    if probe.state == "ok":
        return Finding(name, "ok", probe.detail)
    if probe.state == "unchecked":
        return Finding(name, "skip", probe.detail)
    return Finding(name, "fail", probe.detail, fix)


_MARKS: dict[str, Callable[[], str]] = {
    "ok": lambda: style("✓", fg="green"),
    "warn": lambda: style("!", fg="yellow"),
    "fail": lambda: style("✗", fg="red"),
    "skip": lambda: style("-", dim=True),
}


def _print(findings: list[Finding]) -> None:
    width = max(len(f.check) for f in findings) + 2
    for finding in findings:
        echo(f"{_MARKS[finding.state]()} {finding.check:<{width}}{finding.detail}")
        if finding.fix and finding.state in ("warn", "fail"):
            echo(f"  {'':<{width}}run: {finding.fix}")
    failed = sum(f.state == "fail" for f in findings)
    if failed:
        echo(style(f"\n{failed} problem{'s' if failed != 1 else ''} found.", fg="red"))
    else:
        echo(style("\nNo problems found.", fg="green"))


COMMANDS = [doctor]
