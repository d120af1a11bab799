"""The survey of a whole store: what each project holds, how recently it moved, where its
work stopped, the global records, and which embeddings and vector backend are in use."""

from collections import Counter
from pathlib import Path
from typing import Any

from msgspec import Struct

from contextd.core.upkeep.semantic_index import IndexService, IndexState
from contextd.models import Group, Kind, Project, Status
from contextd.storage import groups as group_rows
from contextd.storage import inventory as rows
from contextd.storage import projects as project_rows
from contextd.storage.store import Database

__all__ = [
    "Inventory",
    "LatestCheckpoint",
    "GroupSurvey",
    "ProjectSurvey",
    "ScopeCounts",
    "inventory_view",
    "survey",
]

LatestCheckpoint = rows.LatestCheckpoint


class ScopeCounts(Struct, frozen=True):
    """Records of one scope (a project, or the global records) by kind and status, and its
    active memories by category."""

    by_kind_status: dict[tuple[Kind, Status], int]
    categories: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.by_kind_status.values())

    def kind(self, kind: Kind, status: Status | None = None) -> int:
        return sum(
            n for (k, s), n in self.by_kind_status.items() if k is kind and status in (None, s)
        )

    def status(self, status: Status) -> int:
        return sum(n for (_, s), n in self.by_kind_status.items() if s is status)

    def merged(self, other: "ScopeCounts") -> "ScopeCounts":
        kinds = Counter(self.by_kind_status) + Counter(other.by_kind_status)
        categories = Counter(self.categories) + Counter(other.categories)
        return ScopeCounts(dict(kinds), dict(categories))


class ProjectSurvey(Struct, frozen=True):
    project: Project
    counts: ScopeCounts
    last_activity: str | None  # latest updated_at of its records; None when it has none
    last_checkpoint: LatestCheckpoint | None
    group: str | None = None  # the slug of the project group it belongs to


class GroupSurvey(Struct, frozen=True):
    """A project group: its member projects' slugs and the records it holds."""

    group: Group
    members: tuple[str, ...]
    counts: ScopeCounts
    last_activity: str | None


class Inventory(Struct, frozen=True):
    home: Path
    projects: tuple[ProjectSurvey, ...]
    global_counts: ScopeCounts
    global_activity: str | None
    index: IndexState
    vector_backend: str
    groups: tuple[GroupSurvey, ...] = ()

    @property
    def totals(self) -> ScopeCounts:
        total = self.global_counts
        for counts in [p.counts for p in self.projects] + [g.counts for g in self.groups]:
            total = total.merged(counts)
        return total

    @property
    def last_activity(self) -> str | None:
        stamps = [p.last_activity for p in self.projects] + [g.last_activity for g in self.groups]
        stamps.append(self.global_activity)
        return max((s for s in stamps if s), default=None)


def survey(db: Database, index: IndexService, home: Path) -> Inventory:
    """Count everything in the store, project by project, in a handful of queries."""
    conn = db.connection()
    counts = rows.kind_status_counts(conn)
    categories = rows.category_counts(conn)
    activity = rows.last_activity(conn)
    checkpoints = rows.latest_checkpoints(conn)

    def scope(key: str) -> ScopeCounts:
        by_kind_status = {
            (Kind(kind), Status(status)): n for (kind, status), n in counts.get(key, {}).items()
        }
        return ScopeCounts(by_kind_status, categories.get(key, {}))

    listed = project_rows.list_projects(conn)
    slugs = {p.id: p.slug for p in listed}
    groups = tuple(
        GroupSurvey(
            g, tuple(slugs[m] for m in g.members if m in slugs), scope(g.id), activity.get(g.id)
        )
        for g in group_rows.list_groups(conn)
    )
    group_of = {m: g.group.slug for g in groups for m in g.group.members}
    projects = tuple(
        ProjectSurvey(p, scope(p.id), activity.get(p.id), checkpoints.get(p.id), group_of.get(p.id))
        for p in listed
    )
    return Inventory(
        home=home,
        projects=projects,
        global_counts=scope(rows.GLOBAL),
        global_activity=activity.get(rows.GLOBAL),
        index=index.state(),
        vector_backend=index.backend(),
        groups=groups,
    )


def counts_view(counts: ScopeCounts, *, detail: bool) -> dict[str, Any]:
    view: dict[str, Any] = {
        "total": counts.total,
        "by_kind": {kind.value: counts.kind(kind) for kind in Kind},
        "by_status": {status.value: counts.status(status) for status in Status},
    }
    if detail:
        view["by_kind_status"] = {
            kind.value: {status.value: counts.kind(kind, status) for status in Status}
            for kind in Kind
        }
        view["categories"] = dict(sorted(counts.categories.items()))
    return view


def inventory_view(inventory: Inventory, *, detail: bool = False) -> dict[str, Any]:
    """The survey as plain JSON: a stable contract (`remote scan` reads it from other hosts)."""
    index = inventory.index
    projects = []
    for item in inventory.projects:
        project = item.project
        view: dict[str, Any] = {
            "id": project.id,
            "slug": project.slug,
            "name": project.name,
            "git_remote": project.git_remote,
            "group": item.group,
            "counts": counts_view(item.counts, detail=detail),
            "last_activity": item.last_activity,
            "last_checkpoint": None
            if item.last_checkpoint is None
            else {
                "id": item.last_checkpoint.id,
                "title": item.last_checkpoint.title,
                "created_at": item.last_checkpoint.created_at,
            },
        }
        if detail:
            view["paths"] = list(project.paths)
        projects.append(view)
    return {
        "home": str(inventory.home),
        "totals": counts_view(inventory.totals, detail=False),
        "last_activity": inventory.last_activity,
        "projects": projects,
        "global": counts_view(inventory.global_counts, detail=True)
        | {"last_activity": inventory.global_activity},
        "groups": [
            {
                "id": g.group.id,
                "slug": g.group.slug,
                "name": g.group.name,
                "members": list(g.members),
                "counts": counts_view(g.counts, detail=detail),
                "last_activity": g.last_activity,
            }
            for g in inventory.groups
        ],
        "embeddings": {
            "provider": index.provider,
            "dimensions": index.dimensions,
            "embedded": index.embedded,
            "records": index.records,
            "note": index.note,
            "vector_backend": inventory.vector_backend,
        },
    }
