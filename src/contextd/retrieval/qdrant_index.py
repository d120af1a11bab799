"""Vectors searched in a Qdrant collection, a copy of SQLite's that is rebuilt from it.

SQLite stays authoritative: before answering, the collection catches up with every vector
stored since its last sync (SQLite's `seq`, recorded in a marker point), from this process
or any other. A missing collection, one of another width or model, or a lost marker means a
rebuild. When Qdrant cannot be reached the SQLite index answers and `note` says why.
"""

import importlib.util
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from msgspec import Struct

from contextd import DISTRIBUTION
from contextd.config import VectorSettings
from contextd.models import Probe, Reach
from contextd.retrieval.passages import with_windows
from contextd.retrieval.vector_index import Centre, SqliteVectorIndex
from contextd.storage import vectors as rows
from contextd.storage.store import Database

__all__ = ["INSTALL_HINT", "QdrantVectorIndex"]

log = logging.getLogger(__name__)
T = TypeVar("T")
INSTALL_HINT = f"pip install '{DISTRIBUTION}[qdrant]'"
_MARKER = str(uuid.UUID(int=0))  # the sync marker's point id; it has no `project` payload
_UPLOAD_BATCH = 512
_RETRY_AFTER_S = 30.0


class QdrantUnavailable(Exception):
    """Qdrant could not be used just now (not installed, unreachable, locked, refused)."""


class _Synced(Struct, frozen=True):
    generation: tuple[int, int]  # SQLite's (count, max seq) the collection matches


class QdrantVectorIndex:
    """The VectorIndex protocol over Qdrant, falling back to `fallback` (SQLite)."""

    backend = "qdrant (a copy of SQLite's vectors)"

    def __init__(
        self,
        db: Database,
        provider_id: str,
        dimensions: int,
        settings: VectorSettings,
        home: Path,
        fallback: SqliteVectorIndex,
    ) -> None:
        self._db = db
        self._provider_id = provider_id
        self._dimensions = dimensions
        self._settings = settings
        self._location = settings.url or str(Path(settings.path or home / "qdrant").expanduser())
        self._fallback = fallback
        self._client: Any = None
        self._synced: _Synced | None = None
        self._token: tuple[int, int] | None = None
        self._failed_at: float | None = None
        self._lock = threading.Lock()
        self.note: str | None = None

    # --- the VectorIndex protocol ---------------------------------------------------------

    def search(
        self, query: list[float], reach: Reach, limit: int, *, starts_only: bool = False
    ) -> list[tuple[str, float]]:
        def ask() -> list[tuple[str, float]]:
            from qdrant_client import models

            scope = models.Filter(
                must=[
                    models.FieldCondition(
                        key="project", match=models.MatchAny(any=[*reach.owners, ""])
                    )
                ]
            )
            found = self._client.query_points(
                self._settings.collection,
                query=query,
                query_filter=scope,
                limit=limit,
                with_payload=["record"],
            ).points
            nearest = {str(p.payload["record"]): float(p.score) for p in found}
            if starts_only:
                return list(nearest.items())
            return self._with_windows(query, nearest)

        return self._guarded(
            ask, lambda: self._fallback.search(query, reach, limit, starts_only=starts_only)
        )

    def similarity(
        self, query: list[float], record_ids: list[str], *, starts_only: bool = False
    ) -> dict[str, float]:
        def ask() -> dict[str, float]:
            found = self._vectors(record_ids)
            cosines = {rid: sum(a * b for a, b in zip(query, v, strict=True)) for rid, v in found}
            return cosines if starts_only else dict(self._with_windows(query, cosines))

        return self._guarded(
            ask, lambda: self._fallback.similarity(query, record_ids, starts_only=starts_only)
        )

    def _with_windows(
        self, query: list[float], cosines: dict[str, float]
    ) -> list[tuple[str, float]]:
        """The long records' windows are SQLite's alone: read for the records found."""
        return with_windows(self._db.connection(), self._provider_id, query, cosines)

    def vectors_of(self, record_ids: list[str]) -> dict[str, list[float]]:
        return self._guarded(
            lambda: dict(self._vectors(record_ids)),
            lambda: self._fallback.vectors_of(record_ids),
        )

    def centre(self, reach: Reach) -> Centre | None:
        """From SQLite's copy: a sum over every vector, which Qdrant would have to stream."""
        return self._fallback.centre(reach)

    def rebuild(self) -> int:
        """Recreate the collection from SQLite.

        Raises:
            ProviderUnavailableError: Qdrant cannot be reached (the SQLite index still works).
        """
        from contextd.errors import ProviderUnavailableError

        self._fallback.rebuild()
        with self._lock:
            try:
                self._connect()
                return self._rebuild()
            except Exception as exc:  # transport and server errors of the client
                if not _is_client_error(exc):
                    raise
                self._fail(exc)
                raise ProviderUnavailableError(
                    f"Qdrant at {self._location} cannot be used ({_one_line(exc)}); the vectors "
                    "are stored in SQLite and searched there: start Qdrant and run "
                    "`contextd refresh` again, or set vectors.backend to sqlite."
                ) from exc

    def probe(self, timeout_s: float) -> Probe:
        """A server is asked for its version within `timeout_s`; a local folder (which only
        one process may open) is checked for the client package and the folder, not opened."""
        if not self._settings.url:
            return _local_probe(Path(self._location))
        import httpx

        key = os.environ.get(self._settings.api_key_env) if self._settings.api_key_env else None
        url = self._settings.url.rstrip("/") + "/"
        try:
            answer = httpx.get(url, headers={"api-key": key} if key else {}, timeout=timeout_s)
        except httpx.HTTPError as exc:
            return Probe(
                "failed",
                f"Qdrant at {url} did not answer within {timeout_s:g} s ({type(exc).__name__})",
            )
        if answer.status_code != 200:
            return Probe("failed", f"Qdrant at {url} answered HTTP {answer.status_code}")
        return Probe("ok", f"Qdrant at {url} answered")

    def load(self, *, resident: bool = False) -> None:
        pass  # Qdrant answers each query; the fallback is read only if it must answer

    def close(self) -> None:
        """Let go of the client (and of a local folder's lock)."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
            self._synced = None
        self._fallback.close()

    # --- keeping the collection in step with SQLite ---------------------------------------

    def _guarded(self, ask: Callable[[], T], fallback: Callable[[], T]) -> T:
        with self._lock:
            try:
                if self._failed_at is not None:
                    if time.monotonic() - self._failed_at < _RETRY_AFTER_S:
                        return fallback()
                    self._failed_at = None
                self._connect()
                self._catch_up()
                answer = ask()
                self.note = None
                return answer
            except QdrantUnavailable as exc:
                self._fail(exc)
            except Exception as exc:  # transport and server errors of the client
                if not _is_client_error(exc):
                    raise
                self._fail(QdrantUnavailable(str(exc) or type(exc).__name__))
        return fallback()

    def _fail(self, exc: Exception) -> None:
        self._failed_at = time.monotonic()
        self.note = (
            f"Qdrant at {self._location} is unavailable ({_one_line(exc)}); "
            "vectors were searched in SQLite"
        )
        log.warning("%s", self.note)

    def _connect(self) -> None:
        if self._client is not None:
            return
        try:
            from qdrant_client import QdrantClient
        except ImportError as exc:
            raise QdrantUnavailable(f"qdrant-client is not installed; {INSTALL_HINT}") from exc
        settings = self._settings
        try:
            if settings.url:
                key = os.environ.get(settings.api_key_env) if settings.api_key_env else None
                self._client = QdrantClient(
                    url=settings.url,
                    api_key=key,
                    timeout=max(1, round(settings.timeout_s)),
                    check_compatibility=False,
                )
            else:
                self._client = QdrantClient(path=self._location)
        except RuntimeError as exc:  # a local folder already opened by another process
            raise QdrantUnavailable(str(exc)) from exc

    def _catch_up(self) -> None:
        token = self._db.change_token()
        if self._synced is not None and self._token == token:
            return
        conn = self._db.connection()
        current = rows.generation(conn)
        synced = self._synced or self._read_marker()
        if synced is None:
            self._rebuild()
        elif synced.generation != current:
            self._apply_changes(synced, current)
        else:
            self._synced = synced
        self._token = token

    def _read_marker(self) -> _Synced | None:
        """The sync state stored in the collection, or None when it must be rebuilt."""
        client, name = self._client, self._settings.collection
        if not client.collection_exists(name):
            return None
        size = client.get_collection(name).config.params.vectors.size
        if size != self._dimensions:
            return None
        found = client.retrieve(name, [_MARKER], with_payload=True)
        if not found or found[0].payload.get("provider") != self._provider_id:
            return None
        payload = found[0].payload
        return _Synced((int(payload["count"]), int(payload["seq"])))

    def _rebuild(self) -> int:
        from qdrant_client import models

        client, name = self._client, self._settings.collection
        if client.collection_exists(name):
            client.delete_collection(name)
        client.create_collection(
            name,
            vectors_config=models.VectorParams(
                size=self._dimensions, distance=models.Distance.COSINE
            ),
        )
        conn = self._db.connection()
        current = rows.generation(conn)
        stored = rows.load_vectors(conn, self._provider_id, self._dimensions)
        self._upsert([s for s in stored if s.vector is not None])
        self._mark(current)
        return sum(1 for s in stored if s.vector is not None)

    def _apply_changes(self, synced: _Synced, current: tuple[int, int]) -> None:
        """Upsert what was stored since the marker; remove what SQLite no longer holds."""
        conn = self._db.connection()
        stored = rows.load_vectors(conn, self._provider_id, self._dimensions, synced.generation[1])
        self._upsert([s for s in stored if s.vector is not None])
        self._delete([s.record_id for s in stored if s.vector is None])
        wanted = rows.vector_stats(conn, self._provider_id, self._dimensions).current
        held = self._client.count(self._settings.collection, exact=True).count - 1  # marker
        if held != wanted:  # records were deleted: compare the ids
            keep = set(rows.stored_hashes(conn, self._provider_id, self._dimensions))
            self._delete([rid for rid in self._point_ids() if rid not in keep])
        self._mark(current)

    def _upsert(self, stored: list[rows.StoredVector]) -> None:
        import numpy as np
        from qdrant_client import models

        for start in range(0, len(stored), _UPLOAD_BATCH):
            batch = stored[start : start + _UPLOAD_BATCH]
            points = [
                models.PointStruct(
                    id=s.record_id,
                    vector=np.frombuffer(s.vector or b"", dtype="<f4").tolist(),
                    payload={"record": s.record_id, "project": s.project_id or ""},
                )
                for s in batch
            ]
            self._client.upsert(self._settings.collection, points=points, wait=True)

    def _delete(self, record_ids: list[str]) -> None:
        from qdrant_client import models

        if record_ids:
            self._client.delete(
                self._settings.collection,
                points_selector=models.PointIdsList(points=list(record_ids)),
                wait=True,
            )

    def _mark(self, generation: tuple[int, int]) -> None:
        from qdrant_client import models

        marker = [1.0] + [0.0] * (self._dimensions - 1)
        payload = {"provider": self._provider_id, "count": generation[0], "seq": generation[1]}
        self._client.upsert(
            self._settings.collection,
            points=[models.PointStruct(id=_MARKER, vector=marker, payload=payload)],
            wait=True,
        )
        self._synced = _Synced(generation)

    def _point_ids(self) -> list[str]:
        ids: list[str] = []
        offset = None
        while True:
            points, offset = self._client.scroll(
                self._settings.collection, limit=1000, offset=offset, with_payload=False
            )
            ids.extend(str(p.id) for p in points if str(p.id) != _MARKER)
            if offset is None:
                return ids

    def _vectors(self, record_ids: list[str]) -> list[tuple[str, list[float]]]:
        if not record_ids:
            return []
        found = self._client.retrieve(
            self._settings.collection, record_ids, with_payload=["record"], with_vectors=True
        )
        return [(str(p.payload["record"]), list(p.vector)) for p in found]


def _local_probe(folder: Path) -> Probe:
    if importlib.util.find_spec("qdrant_client") is None:
        return Probe("failed", f"qdrant-client is not installed; {INSTALL_HINT}")
    place = folder if folder.exists() else folder.parent
    if not os.access(place, os.W_OK):
        return Probe("failed", f"Qdrant's local folder {folder} cannot be written")
    return Probe("ok", f"Qdrant's local folder {folder} (not opened: one process holds it)")


def _is_client_error(exc: Exception) -> bool:
    """Failures of the connection or the server, as opposed to a bug here."""
    import httpx
    from qdrant_client.http.exceptions import ApiException

    return isinstance(exc, ApiException | httpx.HTTPError | OSError | QdrantUnavailable)


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__
