"""The text of a store's survey (`inventory`, `bundle summary`, and `remote scan` of another
machine's): totals split current / superseded, last activity, a table per project with its
last activity and when its last checkpoint was made, the global records; `detail` adds a
block per project: its kinds split by status, its memories by category, its last activity
and checkpoint. Counts and times only, but for what `inventory` adds about this store alone
(checkpoint titles, folders, how many records have a vector).

What `remote scan` prints came from another machine, so every value is checked for its type
and every name shown as data (an older or a broken contextd there prints less, not a
traceback)."""

from typing import Any

from contextd.cli._output import KIND_HEADINGS, table
from contextd.clock import age, is_stamp
from contextd.core.recall.presentation import shown_name
from contextd.models import Kind, Status
from contextd.text.printer import echo, style

__all__ = ["print_summary"]

_COLUMNS = {
    "memory": "mem",
    "decision": "dec",
    "constraint": "con",
    "pipeline": "pipe",
    "checkpoint": "ckpt",
}


def print_summary(payload: dict[str, Any], where: str, *, detail: bool = False) -> None:
    """Print the summary `payload` of the store at `where`."""
    version = shown_name(str(payload.get("contextd", "?")), 40)
    echo(style(f"{shown_name(where, 80)}  contextd {version}", bold=True))
    echo("─" * 33)
    totals = _dict(payload.get("totals"))
    rows = [("Home", shown_name(str(payload.get("home", "?")))), ("Records", _split(totals))]
    by_kind = _dict(totals.get("kinds_by_status"))
    rows += [(KIND_HEADINGS[k], _split_kind(by_kind, k.value)) for k in Kind if k.value in by_kind]
    rows.append(("Deletions", str(_int(payload.get("tombstones")))))
    rows.append(("Last activity", _when(payload.get("last_activity"), "none yet")))
    rows.append(("Embeddings", _embeddings(payload)))
    for label, value in rows:
        echo(f"{label:<15}{value}")
    note = payload.get("note")
    if isinstance(note, str) and note:
        echo(style(f"note: {note}", fg="yellow"))
    projects = [p for p in _list(payload.get("projects")) if isinstance(p, dict)]
    echo()
    if projects:
        _project_table(projects)
    else:
        echo("No projects yet.")
    _global_line(_dict(payload.get("global")))
    for group in _list(payload.get("groups")):
        if isinstance(group, dict):
            _group_line(group)
    if detail:
        for project in projects:
            _project_detail(project)


def _embeddings(payload: dict[str, Any]) -> str:
    provider = str(payload.get("embeddings", "?"))
    if provider == "none":
        return "off (full-text only)"
    parts = [shown_name(provider, 80)]
    embedded = payload.get("embedded")  # this store's own survey: how many have a vector
    if isinstance(embedded, str):
        parts.append(embedded)
    backend = payload.get("vector_backend")
    if isinstance(backend, str) and backend:
        parts.append(f"vectors in {shown_name(backend, 80)}")
    return " · ".join(parts)


def _project_table(projects: list[dict[str, Any]]) -> None:
    header = ["project", *_COLUMNS.values(), "old", "last activity", "last checkpoint"]
    rows = [[style(cell, bold=True) for cell in header]]
    for project in projects:
        statuses = _dict(project.get("statuses"))
        old = _int(statuses.get("superseded")) + _int(statuses.get("archived"))
        rows.append(
            [
                shown_name(str(project.get("slug", "?")), 40),
                *(str(_current(project, k)) for k in _COLUMNS),
                str(old),
                _when(project.get("last_activity"), "-"),
                _checkpoint(_dict(project.get("last_checkpoint"))),
            ]
        )
    table(rows, clip_column=len(header) - 1)


def _checkpoint(checkpoint: dict[str, Any]) -> str:
    """A checkpoint's title where this store's own survey has it, else when it was made."""
    title = checkpoint.get("title")
    if isinstance(title, str) and title:
        return shown_name(title)
    return _when(checkpoint.get("created_at"), "-")


def _current(project: dict[str, Any], kind: str) -> int:
    """A project's current records of `kind` (all of them, from an older contextd's summary
    without the split)."""
    by_status = project.get("kinds_by_status")
    if isinstance(by_status, dict):
        return _int(_dict(by_status.get(kind)).get("active"))
    return _int(_dict(project.get("kinds")).get(kind))


def _global_line(counts: dict[str, Any]) -> None:
    categories = _dict(counts.get("categories"))
    parts = [f"{_int(n)} {shown_name(str(c), 40)}" for c, n in categories.items() if _int(n)]
    active = sum(_int(n) for n in categories.values())
    if not active:
        echo("\nno global records")
        return
    noun = "record" if active == 1 else "records"
    echo(f"\nplus {active} global {noun}, applying to every project: {', '.join(parts)}")


def _group_line(group: dict[str, Any]) -> None:
    members = [shown_name(str(m), 40) for m in _list(group.get("members"))]
    active = _int(_dict(group.get("statuses")).get("active"))
    noun = "record" if active == 1 else "records"
    echo(
        f"group {shown_name(str(group.get('slug', '?')), 40)}: {active} {noun}, applying to "
        f"{', '.join(members) or 'no project yet'}"
    )


def _project_detail(project: dict[str, Any]) -> None:
    echo(f"\n{style(shown_name(str(project.get('name', '?')), 80), bold=True)}")
    remote = project.get("git_remote")
    if isinstance(remote, str) and remote:
        echo(f"  {'remote':<17}{shown_name(remote)}")
    paths = project.get("paths")  # this store's own survey: its folders on this machine
    if isinstance(paths, list):
        shown = ", ".join(shown_name(str(p)) for p in paths)
        echo(f"  {'paths':<17}{shown or 'none on this machine (`contextd attach` adopts it)'}")
    by_kind = _dict(project.get("kinds_by_status"))
    for kind in Kind:
        if kind.value in by_kind:
            echo(f"  {kind.value:<17}{_split_kind(by_kind, kind.value)}")
    categories = _dict(project.get("categories"))
    if categories:
        listed = ", ".join(f"{shown_name(str(c), 40)} {_int(n)}" for c, n in categories.items())
        echo(f"  {'categories':<17}{listed}")
    echo(f"  {'last activity':<17}{_when(project.get('last_activity'), 'none')}")
    checkpoint = _dict(project.get("last_checkpoint")).get("created_at")
    echo(f"  {'last checkpoint':<17}{_when(checkpoint, 'none')}")


def _split(counts: dict[str, Any]) -> str:
    """'124 (118 current, 6 superseded)', or just '18' when all are current."""
    return _said(_int(counts.get("records")), _dict(counts.get("statuses")))


def _split_kind(by_kind: dict[str, Any], kind: str) -> str:
    statuses = _dict(by_kind.get(kind))
    return _said(sum(_int(n) for n in statuses.values()), statuses)


def _said(total: int, statuses: dict[str, Any]) -> str:
    parts = [
        f"{n} {label}"
        for status, label in ((Status.SUPERSEDED, "superseded"), (Status.ARCHIVED, "archived"))
        if (n := _int(statuses.get(status.value)))
    ]
    if not parts:
        return str(total)
    current = _int(statuses.get("active"))
    return f"{total} ({', '.join([f'{current} current', *parts])})"


def _when(stamp: object, missing: str) -> str:
    return age(stamp) if isinstance(stamp, str) and is_stamp(stamp) else missing


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []
