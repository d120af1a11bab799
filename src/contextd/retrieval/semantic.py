"""The vector half of retrieval: the query's vector, the records nearest it, records stored
without a vector embedded on the fly, and the answers learned for alike queries.

Built only when an embedding provider is on, so full-text recall (the prompt hook when no
daemon answers) loads neither this nor the vector storage and logging it needs.
"""

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from msgspec import Struct

from contextd.config import SearchSettings
from contextd.errors import ProviderUnavailableError
from contextd.models import Reach
from contextd.retrieval.fusion import dot
from contextd.retrieval.indexer import Indexer
from contextd.retrieval.vector_index import VectorIndex
from contextd.storage import feedback, vectors
from contextd.storage import records as rows
from contextd.storage.filters import RecordFilter
from contextd.storage.store import Database

__all__ = ["CATCH_UP_LIMIT", "HUB_FEWEST", "Meaning", "Nearest", "SemanticSearch"]

log = logging.getLogger(__name__)
CATCH_UP_LIMIT = 256  # records embedded on the fly at query time; more needs `refresh`
HUB_FEWEST = 20  # records in reach before the hub penalty applies (see _unhubbed)
_EMBEDDERS = 4  # queries searched at once, each while its full-text arm runs
Nearest = tuple[list[float], dict[str, float]]  # a query's vector, and record id -> cosine
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


class Meaning(Struct, frozen=True):
    """What the vectors say about one query."""

    cosines: dict[str, float]  # record id -> cosine with the query (its nearest window's)
    nearest_start: float  # the best cosine of a record's start: what the relevance floor reads
    # record id -> that cosine less the record's hub penalty: what ranks it (see _unhubbed)
    relevance: dict[str, float]
    vector: list[float] | None  # the query's; None when the provider failed
    learned: dict[str, float]  # records learned as answers to alike queries -> likeness
    degraded: str | None  # why the answer is full-text only or partial, if it is


class SemanticSearch:
    """Vector candidates for one store and one embedding provider."""

    def __init__(
        self, db: Database, indexer: Indexer, index: VectorIndex, weights: SearchSettings
    ) -> None:
        self._db = db
        self._indexer = indexer
        self._index = index
        self._weights = weights
        # Per project: every record up to this seq had a vector when last looked at, so the
        # next look only reads what was stored since (records keep their seq when edited).
        self._complete: dict[str | None, int] = {}
        self._index_read = False  # asked for on the first search (see search_soon)

    @property
    def provider_id(self) -> str:
        """The embedding model's id, as its vectors are stored."""
        return self._indexer.provider.id

    def search_soon(self, text: str, reach: Reach, pool: int) -> "Future[Nearest]":
        """The query's vector and the `pool` records nearest it, computed on another thread:
        the model and the matrix product (both release the GIL) run while the full-text arm
        does (SQLite releases it too), on two cores. Warm recall at 10k records went from
        14.8-15.4 to 12.7-13.3 ms p50 with the embedding alone moved there. The caller waits
        for it before it returns or fails: the store may be closed next.

        The first time, the index is read on a third thread while the model loads, rather than
        after it: at 10k records each takes ~70 ms in a one-shot command."""
        embedders = _embedders()
        loading = None
        if not self._index_read:
            self._index_read = True
            loading = embedders.submit(self._index.load)
        # Submitted second, so the load already has a thread of its own when this one waits.
        return embedders.submit(self._nearest, text, reach, pool, loading)

    def meaning(
        self,
        text: str,
        reach: Reach,
        pool: int,
        lexical_ids: list[str],
        soon: "Future[Nearest] | None" = None,
    ) -> Meaning:
        """The `pool` records nearest `text` (found by `soon` when given, see search_soon),
        plus the cosine of each full-text match; when the provider fails, no vectors and a
        note saying so."""
        try:
            degraded, embedded = self._catch_up(reach.project_id)
            if soon is None:
                vector, nearest = self._nearest(text, reach, pool)
            else:
                vector, nearest = soon.result()
                if embedded:  # records given a vector just now may be nearer than those found
                    nearest = dict(self._index.search(vector, reach, pool))
            extra = [rid for rid in lexical_ids if rid not in nearest]
            nearest.update(self._index.similarity(vector, extra))
            degraded = degraded or self._index.note
        except ProviderUnavailableError as exc:
            degraded = f"semantic search unavailable, full-text only: {exc}"
            log.warning("%s", degraded)
            return Meaning({}, 0.0, {}, None, {}, degraded)
        relevance = self._unhubbed(nearest, reach)
        # The best of a long record's many windows is near most queries by chance alone: on
        # off-topic prompts it spoke where the records' starts kept silent (2 in 5 more on
        # rfc-dev), so whether anything fits is judged by the starts (retrieval/floor.py).
        starts = self._index.similarity(vector, list(nearest), starts_only=True)
        return Meaning(
            nearest,
            max(starts.values(), default=0.0),
            relevance,
            vector,
            self._learned(vector, reach.project_id),
            degraded,
        )

    def _unhubbed(self, cosines: dict[str, float], reach: Reach) -> dict[str, float]:
        """Each cosine less `hub_penalty` times how much further than the average record its
        vector leans toward the mean of the reach's vectors.

        A long, generic record (an overview, a catch-all) sits near the middle of every
        embedding cloud, so it is close to every query and crowds out the record a question is
        about. Taking the lean off is centring the query (Suzuki et al., 2013): label-free,
        one product per candidate, and on the eval sets it helped or held every set. In a
        small reach the mean is mostly the records themselves (two near-duplicates would lean
        toward each other), so it is left alone there."""
        penalty = self._weights.hub_penalty
        centre = self._index.centre(reach) if penalty > 0 and cosines else None
        if centre is None or centre.count < HUB_FEWEST:
            return cosines
        # A long record leans as its nearest window does, as it is scored: the max over many
        # windows lifts both its cosine and its lean, so the penalty takes back what chance
        # gave (with its start's lean instead, rfc-dev's hybrid MRR fell 0.506 -> 0.489).
        leans = self._index.similarity(centre.direction, list(cosines))
        return {
            rid: cosine - penalty * (leans.get(rid, centre.lean) - centre.lean)
            for rid, cosine in cosines.items()
        }

    def _nearest(
        self, text: str, reach: Reach, pool: int, loading: "Future[None] | None" = None
    ) -> "Nearest":
        try:
            vector = self._indexer.provider.embed_query(text)
        finally:
            if loading is not None:
                loading.exception()  # done before this is, whatever happens (see search_soon)
        return vector, dict(self._index.search(vector, reach, pool))

    def vectors_of(self, ids: list[str]) -> dict[str, list[float]]:
        return self._index.vectors_of(ids)

    def feedback_vector(self, query: str) -> tuple[str, list[float]] | None:
        """(provider id, vector) of a query to learn from; None when the provider fails."""
        provider = self._indexer.provider
        try:
            return provider.id, provider.embed_query(query)
        except ProviderUnavailableError as exc:
            log.warning("feedback stored without a vector (%s)", exc)
            return None

    def _catch_up(self, project_id: str | None) -> tuple[str | None, bool]:
        """Embed records stored without a vector (provider was down, or the model changed).

        Returns a note when too many are missing to embed now (those are found by text only),
        and whether any record was embedded.
        """
        provider = self._indexer.provider
        conn = self._db.connection()
        newest = vectors.last_seq(conn)
        checked = self._complete.get(project_id, 0)
        if checked == newest:
            return None, False  # nothing was stored since this project was last found complete
        if checked == 0 and vectors.every_record_has_one(conn, provider.id, provider.dimensions):
            self._complete[project_id] = newest  # a first look (a one-shot command): ~20 ms
            return None, False  # less at 10k records than listing the records without one
        missing = vectors.missing_ids(
            conn, provider.id, provider.dimensions, project_id, CATCH_UP_LIMIT + 1, checked
        )
        if len(missing) > CATCH_UP_LIMIT:
            return (
                "many records have no vector yet and are found by full-text only; "
                "run `contextd refresh`"
            ), False
        if missing and self._db.read_only:
            note = f"{len(missing)} records have no vector and are found by full-text only here"
            return note, False
        if missing:
            found = rows.records_in_scope(conn, missing, RecordFilter(project_id, statuses=()))
            self._indexer.embed(list(found.values()))
        self._complete[project_id] = newest
        return None, bool(missing)

    def _learned(self, vector: list[float], project_id: str | None) -> dict[str, float]:
        """Records marked as the answer to queries much like this one, with that likeness."""
        learned: dict[str, float] = {}
        floor = self._weights.feedback_similarity
        for rid, past in feedback.feedback_vectors(
            self._db.connection(), project_id, self._indexer.provider.id
        ):
            likeness = dot(vector, past)
            if likeness >= floor:
                learned[rid] = max(learned.get(rid, 0.0), likeness)
        return learned


def _embedders() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(_EMBEDDERS, thread_name_prefix="contextd-query")
        return _pool
