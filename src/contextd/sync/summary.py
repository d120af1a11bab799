"""What a store holds, as counts, in the shape `remote scan` reads from another machine (no
content): the store's survey (contextd.core.workspace.inventory) with what sync adds, its id and its
deletions."""

from importlib.metadata import PackageNotFoundError, version
from typing import Any

from contextd import DISTRIBUTION
from contextd.core.workspace.inventory import Inventory, ScopeCounts
from contextd.models import Kind, Status
from contextd.storage import sync_state as sync_rows
from contextd.storage.store import Database

__all__ = ["store_summary"]


def _version() -> str:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"


def store_summary(db: Database, survey: Inventory, *, detail: bool = False) -> dict[str, Any]:
    """Counts per project, kind and status; active global records by category; last
    activity, and when each project's last checkpoint was made (not what it says). With
    `detail`, each project's active memories by category."""
    conn = db.connection()
    projects = []
    for item in survey.projects:
        checkpoint = item.last_checkpoint
        view = {
            "slug": item.project.slug,
            "name": item.project.name,
            "git_remote": item.project.git_remote,
            "group": item.group,
            **_counts(item.counts),
            "last_activity": item.last_activity,
            "last_checkpoint": None
            if checkpoint is None
            else {"created_at": checkpoint.created_at},
        }
        if detail:
            view["categories"] = dict(sorted(item.counts.categories.items()))
        projects.append(view)
    global_counts = survey.global_counts
    return {
        "contextd": _version(),
        "home": str(survey.home),
        "store_id": sync_rows.store_id(conn),
        "embeddings": survey.index.provider,
        "vector_backend": survey.vector_backend,
        "records": survey.totals.total,
        "totals": _counts(survey.totals),
        "tombstones": sync_rows.tombstone_count(conn),
        "last_activity": survey.last_activity,
        "projects": projects,
        "global": _counts(global_counts)
        | {"last_activity": survey.global_activity, "categories": _categories(global_counts)},
        "groups": [
            {
                "slug": g.group.slug,
                "name": g.group.name,
                "members": list(g.members),
                **_counts(g.counts),
                "last_activity": g.last_activity,
            }
            for g in survey.groups
        ],
    }


def _counts(counts: ScopeCounts) -> dict[str, Any]:
    kinds = {kind.value: n for kind in Kind if (n := counts.kind(kind))}
    statuses = {status.value: n for status in Status if (n := counts.status(status))}
    by_status = {
        kind: {s.value: n for s in Status if (n := counts.kind(Kind(kind), s))} for kind in kinds
    }
    return {
        "kinds": kinds,
        "statuses": statuses,
        "kinds_by_status": by_status,
        "records": counts.total,
    }


def _categories(counts: ScopeCounts) -> dict[str, int]:
    """Active records by category: memories by theirs, other records by their kind; the
    largest first."""
    found = dict(counts.categories)
    for kind in Kind:
        if kind is not Kind.MEMORY and (n := counts.kind(kind, Status.ACTIVE)):
            found[kind.value] = found.get(kind.value, 0) + n
    return dict(sorted(found.items(), key=lambda pair: (-pair[1], pair[0])))
