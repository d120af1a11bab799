"""Search over a project's records and the global ones."""

from contextd.config import SearchSettings
from contextd.errors import InvalidInputError
from contextd.models import Project, SearchHit, SearchQuery
from contextd.retrieval.search import search_records
from contextd.storage.db import Database

__all__ = ["SearchService", "MAX_LIMIT"]

MAX_LIMIT = 200


class SearchService:
    def __init__(self, db: Database, weights: SearchSettings) -> None:
        self._db = db
        self._weights = weights

    def search(self, project: Project, query: SearchQuery) -> list[SearchHit]:
        """Ranked hits for `query`; superseded and archived records only when asked for."""
        if not 1 <= query.limit <= MAX_LIMIT:
            raise InvalidInputError(f"The limit must be from 1 to {MAX_LIMIT}.")
        return search_records(self._db, query, project.id, self._weights)
