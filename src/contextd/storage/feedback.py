"""SQL for feedback: queries a user or agent marked as answered by a record."""

from contextd.storage.connection import Connection
from contextd.storage.vector_bytes import decode, encode

__all__ = ["add_feedback", "feedback_vectors", "learned_queries"]


def add_feedback(
    conn: Connection,
    project_id: str | None,
    record_id: str,
    query: str,
    provider: str | None,
    vector: list[float] | None,
    stamp: str,
) -> None:
    conn.execute(
        "INSERT INTO feedback(project_id, record_id, query, provider, vector, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (project_id, record_id, query, provider, encode(vector) if vector else None, stamp),
    )


def feedback_vectors(
    conn: Connection, project_id: str | None, provider: str
) -> list[tuple[str, list[float]]]:
    """(record id, query vector) of the project's feedback embedded by `provider`."""
    return [
        (str(rid), decode(bytes(blob)))
        for rid, blob in conn.execute(
            "SELECT record_id, vector FROM feedback "
            f"WHERE project_id {conn.dialect.null_safe_eq} ? AND provider = ? "
            "AND vector IS NOT NULL",
            (project_id, provider),
        )
    ]


def learned_queries(conn: Connection, project_id: str | None) -> list[tuple[str, str]]:
    """(record id, query) of the project's feedback, the latest learned first."""
    return [
        (str(rid), str(query))
        for rid, query in conn.execute(
            "SELECT record_id, query FROM feedback "
            f"WHERE project_id {conn.dialect.null_safe_eq} ? ORDER BY seq DESC",
            (project_id,),
        )
    ]
