"""Vectors searched on the team server itself: pgvector's HNSW index answers each query, so
nothing is loaded into memory and every machine's writes are seen at once."""

import logging
import math
import time

from contextd.errors import StoreError
from contextd.models import Probe, Reach
from contextd.retrieval.passages import with_windows
from contextd.retrieval.vector_index import Centre
from contextd.storage.postgres import vectors as server
from contextd.storage.store import Database

__all__ = ["PgvectorIndex"]

log = logging.getLogger(__name__)
# The mean of thousands of vectors moves little in minutes, and reading it scans them all.
_CENTRE_KEPT_S = 300.0


class PgvectorIndex:
    """The VectorIndex protocol over the server's embeddings table."""

    backend = "postgresql (pgvector HNSW)"

    def __init__(self, db: Database, provider_id: str, dimensions: int) -> None:
        self._db = db
        self._provider_id = provider_id
        self._dimensions = dimensions
        self._indexed: bool | None = None
        self._centres: dict[Reach, tuple[float, Centre | None]] = {}
        self.note: str | None = None

    def search(
        self, query: list[float], reach: Reach, limit: int, *, starts_only: bool = False
    ) -> list[tuple[str, float]]:
        """Record ids in `reach` (the project's, its group's, the global ones), most similar
        first (see VectorIndex.search)."""
        self._ensure_index()
        conn = self._db.connection()
        found = server.nearest(
            conn, conn.dialect, self._provider_id, query, reach.project_id, limit
        )
        if starts_only:
            return found
        return with_windows(conn, self._provider_id, query, dict(found))

    def similarity(
        self, query: list[float], record_ids: list[str], *, starts_only: bool = False
    ) -> dict[str, float]:
        conn = self._db.connection()
        found = server.similarities(conn, conn.dialect, self._provider_id, query, record_ids)
        if starts_only:
            return found
        return dict(with_windows(conn, self._provider_id, query, found))

    def vectors_of(self, record_ids: list[str]) -> dict[str, list[float]]:
        conn = self._db.connection()
        return server.stored_vectors(
            conn, conn.dialect, self._provider_id, self._dimensions, record_ids
        )

    def centre(self, reach: Reach) -> Centre | None:
        """Read from the server at most once every five minutes per reach."""
        kept = self._centres.get(reach)
        if kept is not None and time.monotonic() - kept[0] < _CENTRE_KEPT_S:
            return kept[1]
        conn = self._db.connection()
        mean, count = server.mean_vector(
            conn, conn.dialect, self._provider_id, self._dimensions, reach.project_id
        ) or ([], 0)
        length = math.sqrt(sum(x * x for x in mean))
        found = Centre([x / length for x in mean], length, count) if length > 0 else None
        self._centres[reach] = (time.monotonic(), found)
        return found

    def rebuild(self) -> int:
        """The server keeps its index itself; this only makes sure it exists."""
        self._indexed = None
        self._ensure_index()
        return server.count_vectors(self._db.connection(), self._provider_id, self._dimensions)

    def probe(self, timeout_s: float) -> Probe:
        """The team server answers a count of this provider's vectors (its store's timeouts
        bound the wait)."""
        try:
            held = server.count_vectors(self._db.connection(), self._provider_id, self._dimensions)
        except StoreError as exc:
            return Probe("failed", f"the team server's pgvector table did not answer ({exc})")
        return Probe("ok", f"{held} vectors in pgvector on the team server")

    def load(self, *, resident: bool = False) -> None:
        pass  # the server answers each query: nothing is held here

    def close(self) -> None:
        pass

    def _ensure_index(self) -> None:
        if self._indexed is not None or self._db.read_only:
            return
        try:
            self._indexed = server.ensure_index(self._db.connection(), self._dimensions)
        except StoreError as exc:  # a role without CREATE on the table: exact scans
            log.warning("no HNSW index for width %d: %s", self._dimensions, exc)
            self._indexed = False
        if not self._indexed:
            self.note = f"no HNSW index for {self._dimensions}-wide vectors: searched exactly"
