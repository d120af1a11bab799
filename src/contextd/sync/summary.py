"""What a store holds, as counts: read by `remote scan` on another machine (no content)."""

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from contextd.storage import projects as project_rows
from contextd.storage import sync as sync_rows
from contextd.storage.db import Database

__all__ = ["store_summary"]


def _version() -> str:
    try:
        return version("contextd")
    except PackageNotFoundError:
        return "unknown"


def store_summary(db: Database, home: Path, provider: str) -> dict[str, Any]:
    """Counts per project, kind and status; global records by category; last activity."""
    conn = db.connection()
    projects: dict[str | None, dict[str, Any]] = {
        p.id: {
            "slug": p.slug,
            "name": p.name,
            "git_remote": p.git_remote,
            "kinds": {},
            "statuses": {},
            "records": 0,
            "last_activity": None,
            "last_checkpoint": None,
        }
        for p in project_rows.list_projects(conn)
    }
    projects[None] = {"kinds": {}, "statuses": {}, "records": 0, "last_activity": None}
    for project_id, kind, status, count, last in sync_rows.record_counts(conn):
        entry = projects.get(project_id)
        if entry is None:
            continue
        entry["kinds"][kind] = entry["kinds"].get(kind, 0) + count
        entry["statuses"][status] = entry["statuses"].get(status, 0) + count
        entry["records"] += count
        entry["last_activity"] = max(entry["last_activity"] or last, last)
    for project_id, (title, stamp) in sync_rows.last_checkpoints(conn).items():
        if project_id in projects:
            projects[project_id]["last_checkpoint"] = {"title": title, "created_at": stamp}
    global_entry = projects.pop(None)
    global_entry["categories"] = sync_rows.global_categories(conn)
    listed = list(projects.values())
    activity = [p["last_activity"] for p in [*listed, global_entry] if p["last_activity"]]
    return {
        "contextd": _version(),
        "home": str(home),
        "store_id": sync_rows.store_id(conn),
        "embeddings": provider,
        "records": sum(p["records"] for p in listed) + global_entry["records"],
        "tombstones": sync_rows.tombstone_count(conn),
        "last_activity": max(activity, default=None),
        "projects": listed,
        "global": global_entry,
    }
