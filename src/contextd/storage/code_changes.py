"""SQL for the marks of records whose code changed in git, and how far history was read."""

import json
from collections.abc import Iterable, Sequence

from contextd.models import CodeChange
from contextd.storage.connection import Connection

__all__ = ["current_changes", "last_check", "save_check", "upsert_changes"]


def current_changes(conn: Connection, ids: Sequence[str]) -> dict[str, CodeChange]:
    """The marks of those records still unverified since their change, by record id."""
    if not ids:
        return {}
    dialect = conn.dialect
    rows = conn.execute(
        "SELECT c.record_id, c.commit_sha, c.committed_at, c.subject, c.path, c.change "
        f"FROM {dialect.json_rows('?', 'wanted')} {dialect.index_join} code_changes AS c "
        "ON c.record_id = wanted.value "
        "JOIN records AS r ON r.id = c.record_id WHERE c.committed_at > r.verified_at",
        (json.dumps(list(ids)),),
    ).fetchall()
    return {str(r[0]): CodeChange(*(str(v) for v in r[1:])) for r in rows}


def upsert_changes(conn: Connection, changes: Iterable[tuple[str, CodeChange]]) -> None:
    """Keep each record's latest change (an older one never replaces a newer)."""
    conn.executemany(
        "INSERT INTO code_changes(record_id, commit_sha, committed_at, subject, path, change) "
        "SELECT CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), "
        "CAST(? AS TEXT), CAST(? AS TEXT) WHERE EXISTS (SELECT 1 FROM records WHERE id = ?) "
        "ON CONFLICT(record_id) DO UPDATE SET commit_sha = excluded.commit_sha, "
        "committed_at = excluded.committed_at, subject = excluded.subject, "
        "path = excluded.path, change = excluded.change "
        "WHERE excluded.committed_at >= code_changes.committed_at",
        [(rid, c.commit, c.committed_at, c.subject, c.path, c.change, rid) for rid, c in changes],
    )


def last_check(conn: Connection, project_id: str) -> tuple[str, dict[str, str]] | None:
    """The commit a project's history was read up to, and the renames seen on the way."""
    row = conn.execute(
        "SELECT head, renames FROM code_checks WHERE project_id = ?", (project_id,)
    ).fetchone()
    return (str(row[0]), dict(json.loads(row[1]))) if row else None


def save_check(
    conn: Connection, project_id: str, head: str, renames: dict[str, str], stamp: str
) -> None:
    conn.execute(
        "INSERT INTO code_checks(project_id, head, renames, checked_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(project_id) DO UPDATE SET head = excluded.head, "
        "renames = excluded.renames, checked_at = excluded.checked_at",
        (project_id, head, json.dumps(renames), stamp),
    )
