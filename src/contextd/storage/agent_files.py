"""SQL for agent files: which managed block `export` last wrote to which file."""

from msgspec import Struct

from contextd.storage.connection import Connection

__all__ = ["WrittenBlock", "record_written", "written_block"]


class WrittenBlock(Struct, frozen=True):
    project_id: str
    path: str
    target: str
    sha256: str
    written_at: str


def written_block(conn: Connection, project_id: str, path: str) -> WrittenBlock | None:
    row = conn.execute(
        "SELECT project_id, path, target, sha256, written_at FROM agent_files "
        "WHERE project_id = ? AND path = ?",
        (project_id, path),
    ).fetchone()
    return WrittenBlock(*row) if row else None


def record_written(conn: Connection, block: WrittenBlock) -> None:
    conn.execute(
        "INSERT INTO agent_files(project_id, path, target, sha256, written_at) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT(project_id, path) DO UPDATE SET "
        "target = excluded.target, sha256 = excluded.sha256, written_at = excluded.written_at",
        (block.project_id, block.path, block.target, block.sha256, block.written_at),
    )
