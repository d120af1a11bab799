"""SQL for the survey of a store: counts per scope, kind and status, and latest activity."""

from msgspec import Struct

from contextd.storage.connection import Connection

__all__ = [
    "LatestCheckpoint",
    "category_counts",
    "kind_status_counts",
    "last_activity",
    "latest_checkpoints",
]

# Global records have no project; they are grouped under this key.
GLOBAL = ""


class LatestCheckpoint(Struct, frozen=True):
    id: str
    title: str
    created_at: str


def kind_status_counts(conn: Connection) -> dict[str, dict[tuple[str, str], int]]:
    """Per project id (GLOBAL for global records): count of records by (kind, status)."""
    out: dict[str, dict[tuple[str, str], int]] = {}
    visible, shown = conn.dialect.visible("records")
    rows = conn.execute(
        f"SELECT coalesce(project_id, ''), kind, status, count(*) FROM records WHERE {visible} "
        "GROUP BY project_id, kind, status",
        shown,
    )
    for scope, kind, status, count in rows:
        out.setdefault(scope, {})[(kind, status)] = count
    return out


def category_counts(conn: Connection) -> dict[str, dict[str, int]]:
    """Per project id (GLOBAL for global records): count of active memories by category."""
    out: dict[str, dict[str, int]] = {}
    visible, shown = conn.dialect.visible("records")
    rows = conn.execute(
        "SELECT coalesce(project_id, ''), coalesce(category, 'uncategorised'), count(*) "
        f"FROM records WHERE kind = 'memory' AND status = 'active' AND {visible} GROUP BY 1, 2",
        shown,
    )
    for scope, category, count in rows:
        out.setdefault(scope, {})[category] = count
    return out


def last_activity(conn: Connection) -> dict[str, str]:
    """Per project id (GLOBAL for global records): the latest updated_at of its records."""
    visible, shown = conn.dialect.visible("records")
    rows = conn.execute(
        f"SELECT coalesce(project_id, ''), max(updated_at) FROM records WHERE {visible} "
        "GROUP BY project_id",
        shown,
    )
    return dict(rows.fetchall())


def latest_checkpoints(conn: Connection) -> dict[str, LatestCheckpoint]:
    """Per project id: its newest active checkpoint."""
    visible, shown = conn.dialect.visible("records")
    rows = conn.execute(
        "SELECT project_id, id, title, created_at FROM ("
        "  SELECT project_id, id, title, created_at, row_number() OVER ("
        "    PARTITION BY project_id ORDER BY created_at DESC, id DESC) AS rank"
        "  FROM records WHERE kind = 'checkpoint' AND status = 'active'"
        f"  AND project_id IS NOT NULL AND {visible}"
        ") AS ranked WHERE rank = 1",
        shown,
    )
    return {
        project_id: LatestCheckpoint(rid, title, created)
        for project_id, rid, title, created in rows
    }
