"""Exact cosine kNN over the SQLite copy of the vectors, from a numpy matrix kept in memory."""

import threading
from dataclasses import dataclass
from typing import Any

from contextd.storage import vectors as rows
from contextd.storage.db import Database

__all__ = ["SqliteVectorIndex"]


@dataclass(slots=True)
class _Matrix:
    generation: tuple[int, int]
    ids: list[str]
    position: dict[str, int]
    projects: Any  # int codes per row: 0 = global
    project_codes: dict[str, int]
    vectors: Any  # float32 (rows x dims), unit length


class SqliteVectorIndex:
    """Reads every vector of one provider once, then reloads only when the table changed."""

    backend = "sqlite (exact numpy scan)"

    def __init__(self, db: Database, provider_id: str, dimensions: int) -> None:
        self._db = db
        self._provider_id = provider_id
        self._dimensions = dimensions
        self._matrix: _Matrix | None = None
        self._token: tuple[int, int] | None = None
        self._lock = threading.Lock()

    def search(
        self, query: list[float], project_id: str | None, limit: int
    ) -> list[tuple[str, float]]:
        """Record ids in the project's scope (its own and global), most similar first."""
        import numpy as np  # Deferred: vectors are the only numpy user on the search path.

        matrix = self._current()
        if not matrix.ids:
            return []
        scores = matrix.vectors @ np.asarray(query, dtype=np.float32)
        code = matrix.project_codes.get(project_id or "", -1)
        allowed = (matrix.projects == 0) | (matrix.projects == code)
        scores = np.where(allowed, scores, -np.inf)
        count = min(limit, int(allowed.sum()))
        if count <= 0:
            return []
        top = np.argpartition(-scores, count - 1)[:count]
        top = top[np.argsort(-scores[top])]
        return [(matrix.ids[i], float(scores[i])) for i in top]

    def similarity(self, query: list[float], record_ids: list[str]) -> dict[str, float]:
        """Cosine of the query with each given record that has a vector."""
        import numpy as np

        matrix = self._current()
        positions = [(rid, matrix.position[rid]) for rid in record_ids if rid in matrix.position]
        if not positions:
            return {}
        block = matrix.vectors[[p for _, p in positions]]
        scores = block @ np.asarray(query, dtype=np.float32)
        return {rid: float(score) for (rid, _), score in zip(positions, scores, strict=True)}

    def vectors_of(self, record_ids: list[str]) -> dict[str, list[float]]:
        matrix = self._current()
        return {
            rid: matrix.vectors[matrix.position[rid]].tolist()
            for rid in record_ids
            if rid in matrix.position
        }

    def _current(self) -> _Matrix:
        token = self._db.change_token()
        with self._lock:
            if self._matrix is not None and self._token == token:
                return self._matrix
            conn = self._db.connection()
            current = rows.generation(conn)
            if self._matrix is None or self._matrix.generation != current:
                self._matrix = self._load(conn, current)
            self._token = token
            return self._matrix

    def _load(self, conn: Any, generation: tuple[int, int]) -> _Matrix:
        import numpy as np

        loaded = rows.load_vectors(conn, self._provider_id, self._dimensions)
        codes: dict[str, int] = {}
        projects = np.zeros(len(loaded), dtype=np.int32)
        for i, (_, project_id, _) in enumerate(loaded):
            if project_id is not None:
                projects[i] = codes.setdefault(project_id, len(codes) + 1)
        buffer = b"".join(blob for _, _, blob in loaded)
        vectors = np.frombuffer(buffer, dtype="<f4").reshape(len(loaded), self._dimensions)
        ids = [rid for rid, _, _ in loaded]
        return _Matrix(
            generation, ids, {rid: i for i, rid in enumerate(ids)}, projects, codes, vectors
        )
