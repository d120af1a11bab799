"""Hybrid retrieval: FTS5 and vector candidates in the project's scope, fused and ranked."""

import logging
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from contextd.config import SearchSettings
from contextd.errors import ProviderUnavailableError
from contextd.models import Record, SearchHit, SearchQuery, SearchResult, Status
from contextd.retrieval.fusion import mmr, scale_by_best, scale_by_rank, semantic_relevance
from contextd.retrieval.indexer import Indexer
from contextd.retrieval.scoring import score_record
from contextd.retrieval.vector_index import SqliteVectorIndex
from contextd.storage import records as rows
from contextd.storage import vectors
from contextd.storage.db import Database, translate_errors
from contextd.storage.fts import fts_candidates

__all__ = ["CATCH_UP_LIMIT", "Retriever"]

log = logging.getLogger(__name__)
CATCH_UP_LIMIT = 256  # records embedded on the fly at query time; more needs `refresh`


@dataclass(slots=True)
class _Semantic:
    cosines: dict[str, float]
    vector: list[float] | None


class Retriever:
    """Runs the retrieval pipeline for one store and one embedding provider (or none)."""

    def __init__(
        self,
        db: Database,
        indexer: Indexer | None,
        weights: SearchSettings,
        provider_note: str | None = None,
    ) -> None:
        self._db = db
        self._indexer = indexer
        self._weights = weights
        self._note = provider_note
        self._complete: dict[str | None, tuple[int, ...]] = {}
        self._index = (
            SqliteVectorIndex(db, indexer.provider.id, indexer.provider.dimensions)
            if indexer
            else None
        )

    def search(self, query: SearchQuery, project_id: str | None) -> SearchResult:
        """Best records for `query` among the project's and the global ones, best first.

        Superseded records are always matched; unless asked for, each one hands its match to
        the current end of its supersede chain, so a question worded like an old fact finds
        the fact that replaced it.
        """
        wanted = _scope(query, project_id)
        scope = (
            replace(wanted, statuses=(*wanted.statuses, Status.SUPERSEDED))
            if (Status.SUPERSEDED not in wanted.statuses)
            else wanted
        )
        pool = max(self._weights.candidate_pool, query.limit * 3)
        with translate_errors(self._db.path):
            lexical = {
                r.id: (r, bm25)
                for r, bm25 in fts_candidates(self._db.connection(), query.text, scope, pool)
            }
        degraded = None if self._indexer else "vectors are off (embeddings.provider = none)"
        semantic = _Semantic({}, None)
        if self._indexer is not None:
            try:
                degraded = self._catch_up(project_id)
                semantic = self._semantic(query.text, project_id, pool, list(lexical))
            except ProviderUnavailableError as exc:
                degraded = f"semantic search unavailable, full-text only: {exc}"
                log.warning("%s", degraded)
        candidates = {rid: rec for rid, (rec, _) in lexical.items()}
        missing = [rid for rid in semantic.cosines if rid not in candidates]
        candidates.update(rows.records_in_scope(self._db.connection(), missing, scope))
        hits = self._rank(candidates, lexical, semantic.cosines, project_id)
        hits = self._forward_superseded(hits, wanted)
        if query.diversify and semantic.vector is not None:
            hits = self._diversify(hits, query.limit)
        hits = hits[: query.limit]
        if query.expand_related:
            hits += self._linked(hits, wanted)
        return SearchResult(tuple(hits), degraded)

    def _semantic(
        self, text: str, project_id: str | None, pool: int, lexical_ids: list[str]
    ) -> _Semantic:
        assert self._indexer is not None and self._index is not None
        vector = self._indexer.provider.embed_query(text)
        nearest = dict(self._index.search(vector, project_id, pool))
        extra = [rid for rid in lexical_ids if rid not in nearest]
        nearest.update(self._index.similarity(vector, extra))
        return _Semantic(nearest, vector)

    def _catch_up(self, project_id: str | None) -> str | None:
        """Embed records stored without a vector (provider was down, or the model changed).

        Returns a note when too many are missing to embed now: those are found by text only.
        """
        assert self._indexer is not None
        provider = self._indexer.provider
        conn = self._db.connection()
        state = vectors.store_state(conn)
        if self._complete.get(project_id) == state:
            return None  # nothing was written since this project was last found complete
        missing = vectors.missing_ids(
            conn, provider.id, provider.dimensions, project_id, CATCH_UP_LIMIT + 1
        )
        if len(missing) > CATCH_UP_LIMIT:
            return (
                "many records have no vector yet and are found by full-text only; "
                "run `contextd refresh`"
            )
        if missing:
            found = rows.records_in_scope(conn, missing, rows.RecordFilter(project_id, statuses=()))
            self._indexer.embed(list(found.values()))
        self._complete[project_id] = vectors.store_state(conn)
        return None

    def _rank(
        self,
        candidates: dict[str, Record],
        lexical: dict[str, tuple[Record, float]],
        cosines: dict[str, float],
        project_id: str | None,
    ) -> list[SearchHit]:
        weights = self._weights
        bm25 = {rid: score for rid, (_, score) in lexical.items()}
        meaning = {rid: semantic_relevance(c, weights.semantic_floor) for rid, c in cosines.items()}
        if weights.fusion == "rrf":
            fts = scale_by_rank(bm25, weights.rrf_k)
            sem = scale_by_rank({r: v for r, v in meaning.items() if v > 0}, weights.rrf_k)
        elif weights.fusion == "relative":
            fts, sem = scale_by_best(bm25), scale_by_best(meaning)
        else:
            fts, sem = scale_by_best(bm25), meaning
        moment = datetime.now(UTC)
        hits = []
        for rid, record in candidates.items():
            terms = score_record(
                record,
                fts=fts.get(rid, 0.0),
                semantic=sem.get(rid, 0.0),
                project_id=project_id,
                weights=self._weights,
                moment=moment,
            )
            if terms.fts > 0 or terms.semantic > 0:
                hits.append(SearchHit(record, terms.total, terms))
        hits.sort(key=lambda hit: (hit.score, hit.record.id), reverse=True)
        return hits

    def _forward_superseded(
        self, hits: list[SearchHit], wanted: rows.RecordFilter
    ) -> list[SearchHit]:
        """Credit each superseded hit to its chain's current record, then keep what was asked.

        A current record matched both directly and through its predecessors gets its best
        match plus `chain_bonus` times the next best: the whole history is about the query.
        """
        conn = self._db.connection()
        best: dict[str, SearchHit] = {
            h.record.id: h for h in hits if h.record.status in wanted.statuses
        }
        runner_up: dict[str, float] = {}
        factor = self._weights.successor_factor
        for hit in hits:
            if hit.record.status is not Status.SUPERSEDED:
                continue
            end = rows.chain_end(conn, hit.record)
            if end is None or end.status is not Status.ACTIVE:
                continue
            allowed = rows.records_in_scope(conn, [end.id], wanted).get(end.id)
            if allowed is None:
                continue
            carried = hit.terms.summed * factor
            current = best.get(end.id)
            if current is None or current.score < carried:
                if current is not None:
                    runner_up[end.id] = max(runner_up.get(end.id, 0.0), current.score)
                terms = replace(hit.terms, status_multiplier=factor)
                best[end.id] = SearchHit(allowed, carried, terms, via=hit.record.id)
            else:
                runner_up[end.id] = max(runner_up.get(end.id, 0.0), carried)
        bonus = self._weights.chain_bonus
        for rid, second in runner_up.items():
            hit = best[rid]
            best[rid] = replace(hit, score=hit.score + bonus * second)
        return sorted(best.values(), key=lambda h: (h.score, h.record.id), reverse=True)

    def _diversify(self, hits: list[SearchHit], limit: int) -> list[SearchHit]:
        assert self._index is not None and self._indexer is not None
        vectors = self._index.vectors_of([h.record.id for h in hits])
        # Relevance on the cosine's 0..1 scale, so mmr_balance weighs like against like.
        relevance = scale_by_best({h.record.id: h.score for h in hits})
        return mmr(
            hits,
            lambda h: relevance[h.record.id],
            lambda a, b: _dot(vectors.get(a.record.id), vectors.get(b.record.id)),
            limit,
            self._weights.mmr_balance,
        )

    def _linked(self, hits: list[SearchHit], scope: rows.RecordFilter) -> list[SearchHit]:
        shown = {h.record.id for h in hits}
        wanted: dict[str, SearchHit] = {}
        for hit in hits:
            for rid in hit.record.related_to:
                if rid not in shown and rid not in wanted:
                    wanted[rid] = hit
        found = rows.records_in_scope(self._db.connection(), list(wanted), scope)
        linked = []
        for rid, parent in wanted.items():
            if rid in found:
                linked.append(
                    SearchHit(
                        found[rid],
                        parent.score * self._weights.related_factor,
                        parent.terms,
                        linked_from=parent.record.id,
                    )
                )
        return linked


def _scope(query: SearchQuery, project_id: str | None) -> rows.RecordFilter:
    statuses = [Status.ACTIVE]
    if query.include_superseded:
        statuses.append(Status.SUPERSEDED)
    if query.include_archived:
        statuses.append(Status.ARCHIVED)
    return rows.RecordFilter(
        project_id,
        kinds=query.kinds,
        statuses=tuple(statuses),
        tags=query.tags,
        category=query.category,
        since=query.since,
        before=query.before,
    )


def _dot(a: list[float] | None, b: list[float] | None) -> float:
    if a is None or b is None:
        return 0.0
    return sum(x * y for x, y in zip(a, b, strict=True))
