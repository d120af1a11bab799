"""Keyword search: FTS5 candidates in the project's scope, re-ranked by the scoring formula."""

from datetime import UTC, datetime

from contextd.config import SearchSettings
from contextd.models import SearchHit, SearchQuery, Status
from contextd.retrieval.scoring import score_record
from contextd.storage.db import Database, translate_errors
from contextd.storage.fts import fts_candidates
from contextd.storage.records import RecordFilter

__all__ = ["search_records"]

_MIN_POOL = 50


def search_records(
    db: Database, query: SearchQuery, project_id: str | None, weights: SearchSettings
) -> list[SearchHit]:
    """Best records for `query` among the project's own and the global ones, best first."""
    statuses = [Status.ACTIVE]
    if query.include_superseded:
        statuses.append(Status.SUPERSEDED)
    if query.include_archived:
        statuses.append(Status.ARCHIVED)
    scope = RecordFilter(project_id, kinds=query.kinds, statuses=tuple(statuses), tags=query.tags)
    with translate_errors(db.path):
        candidates = fts_candidates(
            db.connection(), query.text, scope, max(_MIN_POOL, query.limit * 5)
        )
    if not candidates:
        return []
    best = max(relevance for _, relevance in candidates) or 1.0
    moment = datetime.now(UTC)
    hits = []
    for record, relevance in candidates:
        terms = score_record(
            record,
            fts_relevance=relevance / best,
            project_id=project_id,
            weights=weights,
            moment=moment,
        )
        hits.append(SearchHit(record, terms.total, terms))
    hits.sort(key=lambda hit: hit.score, reverse=True)
    return hits[: query.limit]
