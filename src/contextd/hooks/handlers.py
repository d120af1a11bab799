"""What each hook event puts in front of the agent, computed over the core services.

Each handler takes the hook's JSON payload (Claude Code's hook protocol: session_id, cwd,
hook_event_name, and the event's own fields) and returns the text for the agent, or "" to
stay silent. The same code runs in the daemon and, when no daemon answers, in the hook.

What only the rarer events need (the briefing, the quality scan, scope globs, git) is imported
inside their handlers: without a daemon, every prompt pays for what this module imports.
"""

import re
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from contextd.app import App
from contextd.core.compaction import report_text
from contextd.core.search import SEPARATOR, estimate_tokens, passage
from contextd.errors import ContextdError, NotFoundError, ProjectNotResolvedError
from contextd.hooks.reply import is_command
from contextd.models import CodeChange, ConstraintBody, Project, Record, SearchQuery

__all__ = ["handle"]

_GIT_COMMIT = re.compile(r"\bgit\b(?:\s+-[Cc]\s+\S+|\s+--?[\w-]+(?:=\S+)?)*\s+commit\b")


def handle(
    app: App, event: str, payload: dict[str, Any], project_name: str | None, folder: Path
) -> str:
    """The agent-facing text for `event` ("" when there is nothing to say); the project is
    `project_name` ($CONTEXTD_PROJECT of the hook), else the one attached at the payload's cwd,
    else at `folder`, the one the hook runs in."""
    cwd = Path(str(payload.get("cwd") or folder))
    project = _project(app, cwd, project_name)
    if project is None:
        return ""  # outside a known project the hooks are silent
    session_key = str(payload.get("session_id") or "unknown")
    return _HANDLERS[event](app, project, session_key, cwd, payload)


def _project(app: App, cwd: Path, name: str | None) -> Project | None:
    try:
        return app.projects.resolve(name, cwd)
    except (ProjectNotResolvedError, NotFoundError):
        return None


def _session_start(
    app: App, project: Project, session_key: str, cwd: Path, payload: dict[str, Any]
) -> str:
    from contextd.core.briefing import briefing_candidates, build_briefing
    from contextd.core.quality import scan_quality

    candidates = briefing_candidates(app.records, project)
    budget = app.settings.context.session_budget
    changed = _code_changes(app, project, candidates)
    briefing = build_briefing(app.records, project, budget, candidates, code_changes=changed)
    app.hook_state.note_shown(session_key, list(briefing.records), "briefing")
    parts = [briefing.text]
    if payload.get("source") == "compact":
        report = app.hook_state.report(project, session_key)
        if report is not None:
            parts.append(report_text(report))
    # The nudge looks at the records the briefing chose from: the newest of each kind.
    issues = scan_quality(app.records, project, app.settings.lifecycle.stale_days, candidates)
    if issues:
        parts.append(
            f"contextd: {len(issues)} records need attention (thin rationale, stale or "
            "untagged); run verify_quality when there is a quiet moment."
        )
    app.hook_state.forget_old()
    return "\n\n".join(parts)


def _code_changes(app: App, project: Project, candidates: list[Record]) -> dict[str, CodeChange]:
    """Read the commits since the last session, then the marks of the briefing's records."""
    if app.settings.lifecycle.code_staleness:
        # On a failure the briefing goes out without new marks; the next session tries again.
        with suppress(ContextdError, OSError):
            limit = app.settings.lifecycle.code_first_commits
            app.code_staleness.check(project, first_limit=limit)
    return app.code_staleness.changes([r.id for r in candidates])


def _prompt(
    app: App, project: Project, session_key: str, cwd: Path, payload: dict[str, Any]
) -> str:
    prompt = str(payload.get("prompt") or "").strip()
    settings = app.settings.hooks
    if is_command(prompt) or len(prompt) < settings.prompt_min_chars:
        return ""
    wanted = settings.prompt_max_results
    result = app.search.search(project, SearchQuery(text=prompt, limit=wanted * 3))
    hits = list(result.hits)
    if result.degraded is None:
        hits = [h for h in hits if h.similarity >= settings.prompt_similarity_floor]
    elif hits:  # full-text only: no absolute scale, so keep what matches nearly as well as
        # the best match (half its bm25); priority and recency, which the total adds, must not
        # carry a hit. Adaptive fusion raises the bm25 ratio to a power: compare alike.
        search = app.settings.search
        near = 0.5**search.bm25_exponent if search.fusion == "adaptive" else 0.5
        best = max(h.terms.fts for h in hits)
        hits = [h for h in hits if h.terms.fts >= near * best]
    already = app.hook_state.shown(session_key, "prompt") | app.hook_state.shown(
        session_key, "briefing"
    )
    chosen: list[Record] = []
    blocks: list[str] = []
    used = 0
    for hit in hits:
        if hit.record.id in already or hit.linked_from or len(chosen) >= wanted:
            continue
        block = passage(hit, app.settings.context.max_entry_tokens)
        cost = estimate_tokens(SEPARATOR + block)
        if used + cost > settings.prompt_budget:
            continue
        chosen.append(hit.record)
        blocks.append(block)
        used += cost
    if not blocks:
        return ""
    app.hook_state.note_shown(session_key, chosen, "prompt")
    caution = (
        "Project memory recalled for this prompt by contextd. It may be off topic: use what "
        "applies, ignore the rest, and prefer get_context for a deliberate search."
    )
    body = SEPARATOR.join(blocks)
    return f'<working-memory project="{project.slug}">\n{caution}\n\n{body}\n</working-memory>'


def _post_edit(
    app: App, project: Project, session_key: str, cwd: Path, payload: dict[str, Any]
) -> str:
    from contextd.core.scope_guard import constraints_for_path

    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return ""
    raw = tool_input.get("file_path") or tool_input.get("notebook_path")
    if not raw:
        return ""
    path = Path(str(raw))
    if not path.is_absolute():
        path = cwd / path
    seen = app.hook_state.shown(session_key, "constraint")
    covering = [r for r in constraints_for_path(app.records, project, path) if r.id not in seen]
    if not covering:
        return ""
    app.hook_state.note_shown(session_key, covering, "constraint")
    lines = [f"contextd: {path.name} is covered by these constraints; keep them:"]
    for record in covering:
        body = record.body
        assert isinstance(body, ConstraintBody)
        lines.append(f"- [{body.hardness} constraint {record.id}] {record.title}")
        lines.append(f"  why: {body.reason}")
    return "\n".join(lines)


def _post_bash(
    app: App, project: Project, session_key: str, cwd: Path, payload: dict[str, Any]
) -> str:
    tool_input = payload.get("tool_input")
    command = str(tool_input.get("command") or "") if isinstance(tool_input, dict) else ""
    if not _GIT_COMMIT.search(command) or "--dry-run" in command:
        return ""
    response = payload.get("tool_response")
    if isinstance(response, dict) and (
        response.get("interrupted") or "nothing to commit" in str(response.get("stdout", ""))
    ):
        return ""
    subject = _last_commit_subject(cwd)
    if subject is None:
        return ""
    return (
        f'contextd: you committed "{subject}". If it settled a choice between alternatives, '
        "record it with record_decision (problem, why_chosen); if it introduced a rule that "
        "must hold, record_constraint; a gotcha worth keeping, remember."
    )


def _last_commit_subject(folder: Path) -> str | None:
    import subprocess

    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "log", "-1", "--format=%s"],
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=3,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    subject = done.stdout.strip()
    return subject if done.returncode == 0 and subject else None


def _pre_compact(
    app: App, project: Project, session_key: str, cwd: Path, payload: dict[str, Any]
) -> str:
    from contextd.core.quality import scan_quality

    issues = scan_quality(app.records, project, app.settings.lifecycle.stale_days)
    trigger = str(payload.get("trigger") or "auto")
    app.hook_state.snapshot(session_key, project, trigger, len(issues))
    return ""


def _stop(app: App, project: Project, session_key: str, cwd: Path, payload: dict[str, Any]) -> str:
    # The safety net for agents that do not re-run session-start after compacting: compare
    # now, so get_compaction_report has the answer.
    app.hook_state.report(project, session_key)
    return ""


_HANDLERS: dict[str, Callable[[App, Project, str, Path, dict[str, Any]], str]] = {
    "session-start": _session_start,
    "prompt": _prompt,
    "post-edit": _post_edit,
    "post-bash": _post_bash,
    "pre-compact": _pre_compact,
    "stop": _stop,
}
