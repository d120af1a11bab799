"""SQL for project groups: a group is a row of projects (is_group = 1) that owns records as
a project does, and group_members says which group each project belongs to."""

from contextd.models import Group, Reach
from contextd.storage.connection import Connection

__all__ = [
    "active_records",
    "add_member",
    "find_group",
    "group_of",
    "group_slug",
    "held_records",
    "insert_group",
    "list_groups",
    "reach",
    "remove_member",
    "rename_group",
]

_COLUMNS = "id, slug, name, created_at, updated_at"


def reach(conn: Connection, project_id: str | None) -> Reach:
    """Whose records `project_id` sees (storage.filters.in_reach is the same rule in SQL)."""
    return Reach(project_id, group_of(conn, project_id) if project_id else None)


def group_of(conn: Connection, project_id: str) -> str | None:
    """The id of the group the project belongs to, if any."""
    row = conn.execute(
        "SELECT group_id FROM group_members WHERE project_id = ?", (project_id,)
    ).fetchone()
    return str(row[0]) if row else None


def group_slug(conn: Connection, project_id: str) -> str | None:
    """The slug of the group whose id is `project_id`; None when it is a project's."""
    row = conn.execute(
        "SELECT slug FROM projects WHERE id = ? AND is_group = 1", (project_id,)
    ).fetchone()
    return str(row[0]) if row else None


def _group(conn: Connection, row: tuple[str, ...]) -> Group:
    group_id, slug, name, created, updated = row
    members = tuple(
        str(r[0])
        for r in conn.execute(
            "SELECT m.project_id FROM group_members AS m JOIN projects AS p ON p.id = m.project_id "
            "WHERE m.group_id = ? ORDER BY p.slug",
            (group_id,),
        )
    )
    return Group(str(group_id), str(slug), str(name), members, str(created), str(updated))


def insert_group(conn: Connection, group: Group) -> None:
    conn.execute(
        "INSERT INTO projects(id, slug, name, git_remote, created_at, updated_at, is_group) "
        "VALUES (?, ?, ?, NULL, ?, ?, 1)",
        (group.id, group.slug, group.name, group.created_at, group.updated_at),
    )


def list_groups(conn: Connection) -> list[Group]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM projects WHERE is_group = 1 ORDER BY slug"
    ).fetchall()
    return [_group(conn, row) for row in rows]


def find_group(conn: Connection, text: str) -> Group | None:
    """The group whose id, slug or name (case-insensitive) is `text`."""
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM projects WHERE is_group = 1 AND "
        "(id = ? OR lower(slug) = lower(?) OR lower(name) = lower(?)) ORDER BY slug LIMIT 1",
        (text, text, text),
    ).fetchone()
    return _group(conn, row) if row else None


def rename_group(conn: Connection, group_id: str, slug: str, name: str, at: str) -> None:
    conn.execute(
        "UPDATE projects SET slug = ?, name = ?, updated_at = ? WHERE id = ? AND is_group = 1",
        (slug, name, at, group_id),
    )


def add_member(conn: Connection, group_id: str, project_id: str, joined_at: str) -> None:
    conn.execute(
        "INSERT INTO group_members(project_id, group_id, joined_at) VALUES (?, ?, ?)",
        (project_id, group_id, joined_at),
    )
    conn.execute("UPDATE projects SET updated_at = ? WHERE id = ?", (joined_at, group_id))


def remove_member(conn: Connection, group_id: str, project_id: str, left_at: str) -> None:
    conn.execute(
        "DELETE FROM group_members WHERE project_id = ? AND group_id = ?", (project_id, group_id)
    )
    conn.execute("UPDATE projects SET updated_at = ? WHERE id = ?", (left_at, group_id))


def active_records(conn: Connection, group_id: str) -> int:
    """How many active records the group itself holds (that this developer may see)."""
    visible, shown = conn.dialect.visible("records")
    row = conn.execute(
        f"SELECT count(*) FROM records WHERE project_id = ? AND status = 'active' AND {visible}",
        (group_id, *shown),
    ).fetchone()
    return int(row[0])


def held_records(conn: Connection, group_id: str) -> int:
    """How many records the group holds, whatever their status or owner."""
    row = conn.execute("SELECT count(*) FROM records WHERE project_id = ?", (group_id,)).fetchone()
    return int(row[0])
