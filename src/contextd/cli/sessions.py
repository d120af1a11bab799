"""session start/end/list/show: stretches of work by one agent on one project."""

from typing import Any

import click
from msgspec.structs import asdict

from contextd.cli._context import common_options, get_app
from contextd.cli._groups import SuggestingGroup
from contextd.cli._output import emit, table
from contextd.clock import age, duration, now
from contextd.core.reading.views import record_view
from contextd.core.workspace.sessions import SessionReport, SessionRow, duration_seconds
from contextd.errors import NotFoundError
from contextd.models import Kind, Record
from contextd.text.printer import echo, style

__all__ = ["COMMANDS"]

_SECTIONS = (
    ("checkpoints", "Checkpoints"),
    ("memories", "Memories"),
    ("decisions", "Decisions"),
    ("constraints", "Constraints"),
    ("pipelines", "Pipelines"),
)


def _stamp(text: str) -> str:
    return text[:16].replace("T", " ")


def _session_view(session: SessionRow) -> dict[str, Any]:
    seconds = duration_seconds(session.started_at, session.ended_at or now())
    return asdict(session) | {"open": session.ended_at is None, "seconds": seconds}


@click.group(cls=SuggestingGroup)
@common_options
def session() -> None:
    """Stretches of work by one agent on one project (one open per project)."""


@session.command()
@click.option("--agent", required=True, help="Who is working: claude, codex, cursor, a name…")
@common_options
def start(agent: str) -> None:
    """Open a session on the project; a session still open there is closed first."""
    app = get_app()
    project = app.current_project()
    previous = app.sessions.open_for(project)
    started = app.sessions.start(project, agent)
    closed = app.sessions.get(previous.id) if previous else None
    shorts = app.sessions.short_ids([started.id, *([closed.id] if closed else [])])
    payload = {
        "session": _session_view(started),
        "project": {"id": project.id, "slug": project.slug, "name": project.name},
        "closed": None if closed is None else _session_view(closed),
    }

    def human() -> None:
        short = style(shorts[started.id], bold=True)
        echo(f"Started session {short} for {started.agent} on {project.name}.")
        if closed is not None:
            echo(
                f"Closed the session that was still open: {shorts[closed.id]} by {closed.agent}, "
                f"started {age(closed.started_at)}."
            )

    emit(payload, human, long=True)


@session.command()
@click.argument("summary", required=False)
@click.option("--id", "session_id", metavar="ID", help="End this session (default: the open one).")
@common_options
def end(summary: str | None, session_id: str | None) -> None:
    """End the project's open session, with a SUMMARY of what it did."""
    app = get_app()
    summary = summary.strip() if summary and summary.strip() else None
    if session_id is not None:
        found = app.sessions.resolve(session_id)
        already = found.ended_at is not None
        ended = app.sessions.end(found.id, summary)
    else:
        already = False
        ended = app.sessions.end_open(app.current_project(), summary)
    short = app.sessions.short_ids([ended.id])[ended.id]
    seconds = duration_seconds(ended.started_at, ended.ended_at or ended.started_at)

    def human() -> None:
        verb = "Session {} had already ended" if already else "Ended session {}"
        line = f"{verb.format(style(short, bold=True))} ({ended.agent}, ran {duration(seconds)})"
        echo(line + (f": {ended.summary}" if ended.summary else "."))

    emit({"session": _session_view(ended), "already_ended": already}, human)


@session.command(name="list")
@click.option("--all-projects", is_flag=True, help="Sessions of every project, not just this one.")
@click.option("--limit", type=int, default=20, show_default=True, help="At most this many.")
@common_options
def list_command(all_projects: bool, limit: int) -> None:
    """List sessions, newest first: agent, window, duration and summary."""
    app = get_app()
    project = None if all_projects else app.current_project()
    sessions = app.sessions.list_sessions(project, limit)
    shorts = app.sessions.short_ids([s.id for s in sessions])
    names = {p.id: p.name for p in app.projects.list_projects()} if all_projects else {}

    def human() -> None:
        if not sessions:
            where = "any project" if project is None else project.name
            echo(f"No sessions yet on {where}; `contextd session start --agent NAME`.")
            return
        header = ["id", "agent", *(["project"] if all_projects else []), "started", "ended"]
        rows = [[style(cell, bold=True) for cell in [*header, "ran", "summary"]]]
        for s in sessions:
            view = _session_view(s)
            ended = style("open", fg="green") if s.ended_at is None else _stamp(s.ended_at)
            row = [style(shorts[s.id], fg="bright_black"), s.agent]
            row += [names.get(s.project_id, "?")] if all_projects else []
            row += [_stamp(s.started_at), ended, duration(view["seconds"]), s.summary or ""]
            rows.append(row)
        table(rows, clip_column=len(rows[0]) - 1)

    payload = {
        "sessions": [_session_view(s) | {"project": names.get(s.project_id)} for s in sessions]
    }
    emit(payload, human)


@session.command()
@click.argument("session_id", metavar="[ID]", required=False)
@common_options
def show(session_id: str | None) -> None:
    """What a session produced (default: the project's latest): window, duration,
    checkpoints linked to it, and the records made while it ran."""
    app = get_app()
    if session_id is not None:
        found = app.sessions.resolve(session_id)
    else:
        project = app.current_project()
        latest = app.sessions.latest(project)
        if latest is None:
            raise NotFoundError(
                f"No session yet on {project.name}; "
                "`contextd session start --agent NAME` opens one."
            )
        found = latest
    report = app.sessions.report(found)
    project_row = app.projects.get(found.project_id)
    sections = _sections(report)
    record_ids = [r.id for records in sections.values() for r in records]
    shorts = app.reader.handles(record_ids) | app.sessions.short_ids([found.id])
    payload: dict[str, Any] = {
        "session": _session_view(found) | {"seconds": report.seconds},
        "project": None
        if project_row is None
        else {"id": project_row.id, "slug": project_row.slug, "name": project_row.name},
    }
    payload |= {key: [record_view(r) for r in records] for key, records in sections.items()}

    def human() -> None:
        _print_report(report, project_row.name if project_row else "?", sections, shorts)

    emit(payload, human)


def _sections(report: SessionReport) -> dict[str, tuple[Record, ...]]:
    return {
        "checkpoints": report.checkpoints,
        "memories": report.of_kind(Kind.MEMORY),
        "decisions": report.of_kind(Kind.DECISION),
        "constraints": report.of_kind(Kind.CONSTRAINT),
        "pipelines": report.of_kind(Kind.PIPELINE),
    }


def _print_report(
    report: SessionReport,
    project_name: str,
    sections: dict[str, tuple[Record, ...]],
    shorts: dict[str, str],
) -> None:
    s = report.session
    echo(style(f"Session {shorts[s.id]}", bold=True))
    echo("─" * 33)
    end = s.ended_at or style("now (open)", fg="green")
    rows = [
        ("agent", s.agent),
        ("project", project_name),
        ("window", f"{s.started_at} → {end}"),
        ("ran", duration(report.seconds)),
    ]
    if s.summary:
        rows.append(("summary", s.summary))
    for label, value in rows:
        echo(f"{label:<9}{value}")
    if not any(sections.values()):
        echo("\nNothing was recorded in this session's window.")
    for key, title in _SECTIONS:
        if sections[key]:
            echo(f"\n{style(title, bold=True)}")
            for record in sections[key]:
                category = f"[{record.category}] " if record.category else ""
                echo(f"  {shorts[record.id]} {category}{record.title}")


COMMANDS = [session]
