"""The semantic index as a whole: its state, re-embedding, and checking the provider."""

import logging
import threading
import time
from collections.abc import Callable

from msgspec import Struct

from contextd.errors import ProviderUnavailableError
from contextd.models import Probe, Record
from contextd.retrieval.indexer import Indexer
from contextd.retrieval.vector_index import VectorIndex
from contextd.storage import records as record_rows
from contextd.storage import vectors as vector_rows
from contextd.storage.filters import RecordFilter
from contextd.storage.store import Database

__all__ = ["IndexService", "IndexState", "ProviderCheck", "Reachability"]

log = logging.getLogger(__name__)


class IndexState(Struct, frozen=True):
    provider: str  # "none" when vectors are off
    dimensions: int
    records: int
    embedded: int  # records with a vector of the provider in use
    other_models: dict[str, int]  # vectors made by another provider or width
    note: str | None  # why the configured provider is not the one in use
    backend: str  # where the vectors are searched

    @property
    def fix(self) -> str | None:
        """The command that brings the index up to date, when it is not."""
        if self.provider == "none":
            return None
        if self.other_models:
            return "contextd refresh --force-embeddings"
        return "contextd refresh" if self.embedded < self.records else None


class ProviderCheck(Struct, frozen=True):
    provider: str
    dimensions: int
    seconds: float
    state: IndexState


class Reachability(Struct, frozen=True):
    """Whether the embedding provider and the place vectors are searched answer now."""

    embeddings: Probe
    vectors: Probe


_OFF = Probe("unchecked", "vectors are off (embeddings.provider = none)")


class IndexService:
    def __init__(
        self,
        db: Database,
        indexer: Indexer | None,
        index: VectorIndex | None,
        note: str | None,
    ) -> None:
        self._db = db
        self._indexer = indexer
        self._index = index
        self._note = note
        self._warming: threading.Thread | None = None

    def backend(self) -> str:
        """Where the vectors are searched, as a person would name it."""
        return "none (full-text only)" if self._index is None else self._index.backend

    def warm(self) -> None:
        """Load the model and the vector matrix now, so the first query does not wait."""
        if self._indexer is None or self._index is None:
            return
        self._indexer.provider.warm()
        self._indexer.provider.embed_query("warm up")
        self._index.load(resident=True)

    def warm_in_background(self) -> None:
        """`warm` on a thread of its own, for a server about to answer many calls: the model
        loads while it starts and its first client connects. Without it a server would keep
        the runtime chosen for a one-shot command (numpy, see contextd.embeddings.local)."""
        self._warming = threading.Thread(
            target=self._warm_quietly, name="contextd-warm", daemon=True
        )
        self._warming.start()

    def settle(self, timeout_s: float = 120.0) -> None:
        """Wait for `warm_in_background` to be done (a process about to exit must not leave
        a thread inside the model's runtime)."""
        if self._warming is not None:
            self._warming.join(timeout_s)

    def _warm_quietly(self) -> None:
        try:
            self.warm()
        except Exception as error:  # its thread's top-level handler: a failure only costs speed
            log.warning("Warming the model failed (%s); the first query will load it.", error)
            log.debug("warming the semantic index", exc_info=True)

    def state(self) -> IndexState:
        conn = self._db.connection()
        if self._indexer is None:
            count = int(conn.execute("SELECT count(*) FROM records").fetchone()[0])
            return IndexState("none", 0, count, 0, {}, self._note, self.backend())
        provider = self._indexer.provider
        stats = vector_rows.vector_stats(conn, provider.id, provider.dimensions)
        return IndexState(
            provider.id,
            provider.dimensions,
            stats.records,
            stats.current,
            stats.other,
            self._note,
            self.backend(),
        )

    def probe(self, timeout_s: float) -> Reachability:
        """Ask the provider and the vector index, each within about `timeout_s`."""
        if self._indexer is None or self._index is None:
            return Reachability(_OFF, _OFF)
        return Reachability(self._indexer.provider.probe(timeout_s), self._index.probe(timeout_s))

    def pending(self, *, force: bool = False) -> int:
        """How many records `refresh` would embed."""
        if self._indexer is None:
            return 0
        return len(self._indexer.stale(self._every_record(), force=force))

    def refresh(
        self, *, force: bool = False, progress: Callable[[int, int], None] | None = None
    ) -> int:
        """Embed every record whose vector is missing, stale or (with `force`) any; returns
        how many were embedded."""
        if self._indexer is None:
            raise ProviderUnavailableError(
                "Vectors are off (embeddings.provider = none); nothing to refresh."
            )
        pending = self._indexer.stale(self._every_record(), force=force)
        done = 0

        def tick(count: int) -> None:
            nonlocal done
            done += count
            if progress:
                progress(done, len(pending))

        self._indexer.embed(pending, tick)
        if force:
            with self._db.transaction() as conn:
                vector_rows.drop_other_models(
                    conn, self._indexer.provider.id, self._indexer.provider.dimensions
                )
        return len(pending)

    def rebuild(self) -> int:
        """Rebuild the vector index (a Qdrant copy too) from SQLite; how many vectors it holds."""
        return 0 if self._index is None else self._index.rebuild()

    def _every_record(self) -> list[Record]:
        everything = RecordFilter(None, statuses=(), every_project=True)
        return record_rows.list_records(self._db.connection(), everything, oldest_first=True)

    def check(self) -> ProviderCheck:
        """Ask the provider for one real vector and report its width and speed.

        Raises:
            ProviderUnavailableError: vectors are off, or the provider fails to answer.
        """
        if self._indexer is None:
            raise ProviderUnavailableError(
                "Vectors are off (embeddings.provider = none); retrieval is full-text only."
            )
        provider = self._indexer.provider
        started = time.perf_counter()
        vector = provider.embed_query("contextd configuration check")
        elapsed = time.perf_counter() - started
        if len(vector) != provider.dimensions:
            raise ProviderUnavailableError(
                f"{provider.id} returned {len(vector)} dimensions, not {provider.dimensions}; "
                f"run `contextd config set embeddings.dimensions {len(vector)}`."
            )
        return ProviderCheck(provider.id, len(vector), elapsed, self.state())
