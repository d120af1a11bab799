"""SQL for projects and the folders they are attached at."""

from pathlib import Path

from contextd.models import Project
from contextd.storage.connection import Connection

__all__ = [
    "free_slug",
    "add_path",
    "delete_project",
    "exists",
    "find_by_remote",
    "find_by_slug_or_name",
    "get_project",
    "insert_project",
    "list_paths",
    "list_projects",
    "project_for_path",
    "remove_path",
    "slug_taken",
    "touch_project",
]


def _project(conn: Connection, row: tuple[str, ...]) -> Project:
    project_id, slug, name, remote, created, updated = row
    paths = tuple(
        r[0]
        for r in conn.execute(
            "SELECT path FROM project_paths WHERE project_id = ? ORDER BY attached_at",
            (project_id,),
        )
    )
    return Project(project_id, slug, name, remote, paths, created, updated)


_COLUMNS = "id, slug, name, git_remote, created_at, updated_at"


def insert_project(conn: Connection, project: Project) -> None:
    conn.execute(
        f"INSERT INTO projects({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
        (
            project.id,
            project.slug,
            project.name,
            project.git_remote,
            project.created_at,
            project.updated_at,
        ),
    )
    for path in project.paths:
        add_path(conn, project.id, path, project.created_at)


def touch_project(
    conn: Connection, project_id: str, git_remote: str | None, updated_at: str
) -> None:
    conn.execute(
        "UPDATE projects SET git_remote = coalesce(?, git_remote), updated_at = ? WHERE id = ?",
        (git_remote, updated_at, project_id),
    )


def rename_project(conn: Connection, project_id: str, name: str, updated_at: str) -> None:
    """A new display name; the slug stays, since commands and settings name the project by it."""
    conn.execute(
        "UPDATE projects SET name = ?, updated_at = ? WHERE id = ?", (name, updated_at, project_id)
    )


# A group is a row of projects too (storage.groups); these functions see projects only.
_PROJECT = "is_group = 0"


def get_project(conn: Connection, project_id: str) -> Project | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM projects WHERE id = ? AND {_PROJECT}", (project_id,)
    ).fetchone()
    return _project(conn, row) if row else None


def exists(conn: Connection, project_id: str) -> bool:
    """Whether a project or project group has this id."""
    return conn.execute("SELECT 1 FROM projects WHERE id = ?", (project_id,)).fetchone() is not None


def list_projects(conn: Connection) -> list[Project]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM projects WHERE {_PROJECT} ORDER BY slug"
    ).fetchall()
    return [_project(conn, row) for row in rows]


def find_by_slug_or_name(conn: Connection, text: str) -> list[Project]:
    """Projects whose slug or name equals `text` (case-insensitive), or whose id starts with it."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM projects WHERE {_PROJECT} AND (lower(slug) = lower(?) OR "
        "lower(name) = lower(?) OR "
        "(length(CAST(? AS TEXT)) >= 8 AND id LIKE CAST(? AS TEXT) || '%'))",
        (text, text, text, text.lower()),
    ).fetchall()
    return [_project(conn, row) for row in rows]


def find_by_remote(conn: Connection, git_remote: str) -> Project | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM projects WHERE git_remote = ? AND {_PROJECT} "
        "ORDER BY created_at LIMIT 1",
        (git_remote,),
    ).fetchone()
    return _project(conn, row) if row else None


def free_slug(conn: Connection, slug: str) -> str:
    """`slug`, or `slug-2`, `slug-3`... the first no project or group has."""
    candidate, number = slug, 2
    while slug_taken(conn, candidate):
        candidate, number = f"{slug}-{number}", number + 1
    return candidate


def slug_taken(conn: Connection, slug: str) -> bool:
    return conn.execute("SELECT 1 FROM projects WHERE slug = ?", (slug,)).fetchone() is not None


def list_paths(conn: Connection) -> list[tuple[str, str]]:
    """Every (path, project id) attachment."""
    return [(r[0], r[1]) for r in conn.execute("SELECT path, project_id FROM project_paths")]


def project_for_path(conn: Connection, path: Path) -> tuple[str, str] | None:
    """The attachment (path, project id) whose folder holds `path`, the deepest one winning."""
    best: tuple[str, str] | None = None
    for attached, project_id in list_paths(conn):
        if path.is_relative_to(attached) and (best is None or len(attached) > len(best[0])):
            best = (attached, project_id)
    return best


def add_path(conn: Connection, project_id: str, path: str, attached_at: str) -> None:
    conn.execute(
        "INSERT INTO project_paths(path, project_id, attached_at) VALUES (?, ?, ?) "
        "ON CONFLICT(path) DO UPDATE SET project_id = excluded.project_id",
        (path, project_id, attached_at),
    )


def remove_path(conn: Connection, path: str) -> None:
    conn.execute("DELETE FROM project_paths WHERE path = ?", (path,))


def delete_project(conn: Connection, project_id: str) -> int:
    """Remove a project with its records, sessions and tombstones; returns the records removed."""
    count: int = conn.execute(
        "SELECT count(*) FROM records WHERE project_id = ?", (project_id,)
    ).fetchone()[0]
    conn.execute("DELETE FROM tombstones WHERE project_id = ?", (project_id,))
    conn.execute("DELETE FROM projects WHERE id = ?", (project_id,))
    return count
