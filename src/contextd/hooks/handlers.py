"""What each hook event puts in front of the agent, computed over the core services.

Each handler takes the hook's event, read from the agent's JSON payload by its adapter
(contextd.hooks.adapters), and returns the text for the agent, or "" to stay silent. The
same code runs in the daemon and, when no daemon answers, in the hook.

What only the rarer events need (the briefing, the quality scan, scope globs, git) is imported
inside their handlers: without a daemon, every prompt pays for what this module imports.
"""

import re
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from contextd.app import App
from contextd.config import Settings
from contextd.core.recall.compaction import report_text
from contextd.core.recall.packing import SEPARATOR, pack
from contextd.core.recall.presentation import (
    WRITES_OFF,
    fence,
    fence_overhead,
    one_line,
    shown_name,
)
from contextd.core.recall.queries import MAX_QUERY_CHARS, passage
from contextd.errors import ContextdError, NotFoundError, ProjectNotResolvedError
from contextd.fields import body_fields
from contextd.hooks.adapters import HookEvent, adapt
from contextd.hooks.reply import is_command
from contextd.models import CodeChange, ConstraintBody, Project, Record, SearchQuery
from contextd.provenance import changes_via
from contextd.share.layout import shared_checkout
from contextd.text.grammar import counted

__all__ = ["handle", "turned_off"]

_GIT_COMMIT = re.compile(r"\bgit\b(?:\s+-[Cc]\s+\S+|\s+--?[\w-]+(?:=\S+)?)*\s+commit\b")


def handle(
    app: App,
    event: str,
    payload: dict[str, Any],
    project_name: str | None,
    folder: Path,
    project_dirs: Sequence[str] = (),
) -> str:
    """The agent-facing text for `event` ("" when there is nothing to say); the project is
    `project_name` ($CONTEXTD_PROJECT of the hook), else the first attached one among the
    folders the payload names, the agent's project-folder variables `project_dirs`, and
    `folder`, the one the hook runs in (contextd.hooks.adapters reads each agent's payload)."""
    if turned_off(app.settings, event):
        return ""
    hook = adapt(payload, folder, project_dirs)
    project = _project(app, hook.folders, project_name)
    if project is None:
        return ""  # outside a known project the hooks are silent
    with changes_via("hook"):
        return _HANDLERS[event](
            app, project, replace(hook, session_key=session_key(hook.session_key))
        )


def turned_off(settings: Settings, event: str) -> bool:
    """Whether config turned the hook off: a budget of 0 tokens for what it prints."""
    budgets = {
        "session-start": settings.context.session_budget,
        "prompt": settings.hooks.prompt_budget,
    }
    return budgets.get(event) == 0


_PLAIN_KEY = re.compile(r"[0-9a-z][0-9a-z-]{0,39}")  # a UUID, "sess-1": no token looks so


def session_key(raw: object) -> str:
    """What the store keeps of the agent's session id: the id when it is a plain id (a UUID,
    a short name), else a hash of it. Only equality matters, and whatever else a payload puts
    there (a long text, a pasted token) must not be stored."""
    text = str(raw or "unknown")
    if _PLAIN_KEY.fullmatch(text):
        return text
    import hashlib

    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _project(app: App, folders: Sequence[Path], name: str | None) -> Project | None:
    for cwd in folders if name is None else folders[:1]:
        try:
            project = app.project(name, cwd)
        except (ProjectNotResolvedError, NotFoundError):
            continue
        app.shares.take_in(project, app.vectors_wanted)  # a checkout's new team files
        return project
    return None


def _session_start(app: App, project: Project, hook: HookEvent) -> str:
    from contextd.core.recall.briefing import briefing_candidates, build_briefing
    from contextd.core.upkeep.quality import records_flagged, scan_quality

    _capture_begins(app, project, hook)
    candidates = briefing_candidates(app.reader, project)
    budget = app.settings.context.session_budget
    changed = _code_changes(app, project, candidates)
    briefing = build_briefing(app.reader, project, budget, candidates, code_changes=changed)
    app.hook_state.note_shown(hook.session_key, list(briefing.records), "briefing")
    parts = [briefing.text]
    if hook.source == "compact":
        report = app.hook_state.report(project, hook.session_key)
        if report is not None:
            parts.append(report_text(report))
        if not app.db.read_only:
            parts.append(_AFTER_COMPACTION)
    if app.db.read_only:
        parts.append(WRITES_OFF)
    waiting = app.review.count(project)
    if waiting:
        parts.append(
            f"contextd: {counted(waiting, 'draft')} (what agents wrote, or proposals) "
            f"{'waits' if waiting == 1 else 'wait'} for the user's review (`contextd review`); "
            "they are not memory yet, so do not write them again."
        )
    # The nudge looks at the records the briefing chose from: the newest of each kind.
    issues = scan_quality(app.reader, project, app.settings.lifecycle.stale_days, candidates)
    flagged = records_flagged(issues)
    if flagged:
        parts.append(
            f"contextd: {counted(flagged, 'record')} {'needs' if flagged == 1 else 'need'} "
            "attention (thin rationale, stale or untagged); run verify_quality when there is a "
            "quiet moment."
        )
    shared = app.shares.view(project) if shared_checkout(project.checkout) else None
    if shared is not None and shared.problems:
        # File names are a teammate's text too: inside the fence, never in contextd's voice.
        lines = [f"- {shown_name(p.path)}: {one_line(p.reason)}" for p in shared.problems]
        parts.append(
            f"contextd: {len(lines)} shared record files were not taken in; fix each and the "
            "next session sees it.\n"
            + fence("\n".join(lines), attributes={"source": "shared record files"})
        )
    app.hook_state.forget_old()
    return "\n\n".join(parts)


_AFTER_COMPACTION = (
    "contextd: the conversation was just compacted. If the work is mid-way, record where it "
    "stands with checkpoint (goal, what is done, what is next) so the next compaction or "
    "session does not lose it."
)


def _capture_begins(app: App, project: Project, hook: HookEvent) -> None:
    """Note where git stands for this session, and draft the checkpoints of this developer's
    sessions that ended unseen (agents without a session-end hook)."""
    if app.db.read_only:
        return
    capture = app.capture
    if app.settings.capture.draft_checkpoints:
        for key in capture.unended(project, hook.session_key):
            _draft_checkpoint(app, project, key, None)
    capture.begin(project, hook.session_key, hook.cwd)


def _draft_checkpoint(app: App, project: Project, key: str, folder: Path | None) -> str:
    """Write the checkpoint a session left out, if it did work; what to tell the user."""
    draft = app.capture.draft_at_end(project, key, folder)
    stored = None
    if draft is not None:
        with suppress(ContextdError):  # a refused draft must not take the hook with it
            stored = app.writer.record(draft, project, force=True)
    app.capture.ended(key, None if stored is None else stored.record)
    if stored is None:
        return ""
    title = one_line(stored.record.title)
    if stored.held:
        return f"contextd drafted a checkpoint of this session for your review: {title}"
    return f"contextd drafted a checkpoint of this session: {title}"


def _code_changes(app: App, project: Project, candidates: list[Record]) -> dict[str, CodeChange]:
    """Read the commits since the last session, then the marks of the briefing's records."""
    if app.settings.lifecycle.code_staleness:
        # On a failure the briefing goes out without new marks; the next session tries again.
        with suppress(ContextdError, OSError):
            limit = app.settings.lifecycle.code_first_commits
            app.code_staleness.check(project, first_limit=limit)
    return app.code_staleness.changes([r.id for r in candidates])


def _prompt(app: App, project: Project, hook: HookEvent) -> str:
    prompt = hook.prompt.strip()
    settings = app.settings.hooks
    if is_command(prompt) or len(prompt) < settings.prompt_min_chars:
        return ""
    wanted = settings.prompt_max_results
    query = SearchQuery(
        text=prompt[:MAX_QUERY_CHARS],  # a long prompt: its start
        limit=wanted * 3,  # room for what this session was already given
        least_similarity=settings.prompt_similarity_floor,
    )
    hits = app.search.search(project, query).hits
    already = app.hook_state.shown(hook.session_key, "prompt") | app.hook_state.shown(
        hook.session_key, "briefing"
    )
    caution = (
        "Recalled for this prompt; it may be off topic: use what applies, ignore the rest, "
        "and prefer get_context for a deliberate search."
    )
    attributes = {"project": project.slug}
    cut = app.settings.context.max_entry_tokens
    chosen, blocks = pack(
        (
            (hit.record, passage(hit, cut))
            for hit in hits
            if hit.record.id not in already and not hit.linked_from
        ),
        settings.prompt_budget,
        reserved=fence_overhead(_PROMPT_FENCE, caution, attributes),
        most=wanted,
    )
    if not blocks:
        return ""
    app.hook_state.note_shown(hook.session_key, chosen, "prompt")
    body = SEPARATOR.join(blocks)
    return fence(body, tag=_PROMPT_FENCE, attributes=attributes, note=caution)


_PROMPT_FENCE = "working-memory"


def _post_edit(app: App, project: Project, hook: HookEvent) -> str:
    from contextd.core.recall.scope_guard import constraints_for_path

    capture = app.settings.capture
    if (capture.stop_prompt or capture.draft_checkpoints) and not app.db.read_only:
        app.capture.note_edits(project, hook.session_key, hook.cwd, hook.edited)
    seen = app.hook_state.shown(hook.session_key, "constraint")
    for path in hook.edited:  # Codex's apply_patch may write several files at once
        found = constraints_for_path(app.reader, project, path)
        covering = [r for r in found if r.id not in seen]
        if covering:
            break
    else:
        return ""
    app.hook_state.note_shown(hook.session_key, covering, "constraint")
    lines = [f"{one_line(path.name)} is covered by these constraints; keep them:"]
    for record in covering:
        body = record.body
        assert isinstance(body, ConstraintBody)
        lines.append(f"- [{body.hardness} constraint {record.id}] {one_line(record.title)}")
        lines.append(f"  why: {one_line(body.reason)}")
    return fence("\n".join(lines), attributes={"project": project.slug})


_NEEDED = ", ".join(f.name for f in body_fields("decision") if f.required)


def _post_bash(app: App, project: Project, hook: HookEvent) -> str:
    command = hook.command
    if not _GIT_COMMIT.search(command) or "--dry-run" in command:
        return ""
    if hook.failed or "nothing to commit" in hook.output:
        return ""  # no new commit: the last one is not this command's
    last = _last_commit(hook.cwd)
    if last is None:
        return ""
    sha, subject = last
    capture = app.settings.capture
    if (capture.stop_prompt or capture.draft_checkpoints) and not app.db.read_only:
        app.capture.note_commit(project, hook.session_key, hook.cwd, sha, subject)
    return (
        f'contextd: you committed "{one_line(subject)[:200]}". If it settled a choice between '
        f"alternatives, record it with record_decision ({_NEEDED}); if it introduced a "
        "rule that must hold, record_constraint; a gotcha worth keeping, remember."
    )


def _last_commit(folder: Path) -> tuple[str, str] | None:
    """HEAD's full id and subject."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "log", "-1", "--format=%H %s"],
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=3,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    sha, _, subject = done.stdout.strip().partition(" ")
    return (sha, subject) if done.returncode == 0 and subject else None


def _pre_compact(app: App, project: Project, hook: HookEvent) -> str:
    """Snapshot what the session was given; tell the person what was kept and what the
    quality scan flagged (the agent's reply shows it to the user, not to the model)."""
    from contextd.core.upkeep.quality import records_flagged, scan_quality

    issues = scan_quality(app.reader, project, app.settings.lifecycle.stale_days)
    # Only the two triggers agents send are kept; anything else a payload says is not stored.
    trigger = "manual" if hook.trigger == "manual" else "auto"
    flagged = records_flagged(issues)
    given = app.hook_state.snapshot(hook.session_key, project, trigger, flagged)
    lines = [
        f"contextd: before this {trigger} compaction, snapshotted the "
        f"{counted(given, 'record')} this session was given in {shown_name(project.name)}; "
        "the next briefing says which it lost."
    ]
    if issues:
        lines.append(
            f"The quality scan flagged {counted(flagged, 'record')} (`contextd quality` to fix "
            "them):"
        )
        shown = issues[:_FLAGGED_SHOWN]
        lines += [
            f"- {i.record.id} {i.kind.replace('_', ' ')}: {one_line(i.record.title)[:80]}"
            for i in shown
        ]
        if len(issues) > len(shown):
            lines.append(f"- and {len(issues) - len(shown)} more")
    else:
        lines.append("The quality scan flagged nothing.")
    return "\n".join(lines)


_FLAGGED_SHOWN = 5


def _stop(app: App, project: Project, hook: HookEvent) -> str:
    # The safety net for agents that do not re-run session-start after compacting: compare
    # now, so get_compaction_report has the answer.
    app.hook_state.report(project, hook.session_key)
    _extract_later(app, project, hook)
    if hook.continuing or not app.settings.capture.stop_prompt:
        return ""  # the agent goes on because a stop hook asked: never ask again, never loop
    return app.capture.request_at_stop(project, hook.session_key, hook.cwd)


def _session_end(app: App, project: Project, hook: HookEvent) -> str:
    _extract_later(app, project, hook)
    if app.db.read_only or not app.settings.capture.draft_checkpoints:
        return ""
    return _draft_checkpoint(app, project, hook.session_key, hook.cwd)


def _extract_later(app: App, project: Project, hook: HookEvent) -> None:
    """With an extractor configured, hand the transcript's new part to a detached process
    (the hook never waits for a model)."""
    transcript = hook.transcript
    if app.settings.capture.extractor == "none" or transcript is None or app.db.read_only:
        return
    if app.capture.transcript_grew(hook.session_key, transcript):
        from contextd.wire.launch import start_extraction  # (subprocess) only here

        start_extraction(app.settings.home, project.id, hook.session_key, transcript)


_HANDLERS: dict[str, Callable[[App, Project, HookEvent], str]] = {
    "session-start": _session_start,
    "prompt": _prompt,
    "post-edit": _post_edit,
    "post-bash": _post_bash,
    "pre-compact": _pre_compact,
    "stop": _stop,
    "session-end": _session_end,
}
