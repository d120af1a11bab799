"""The record list: filters read from the URL, then either the project's records newest first
(a page at a time) or a search with its scores, both through the core services."""

from collections import Counter

from msgspec import Struct

from contextd.app import App
from contextd.core.reading.pages import RecordPage
from contextd.errors import InvalidInputError
from contextd.models import Kind, Project, Record, SearchHit, SearchQuery, Status

MAX_PAGE_NUMBER = 1_000_000  # past the last page shows the last; beyond this is no page

__all__ = ["PAGE_SIZE", "Filters", "Listing", "list_records", "read_filters"]

PAGE_SIZE = 50
SEARCH_LIMIT = 50
MAX_QUERY = 1000
STATUSES = ("active", "superseded", "archived", "all")


class Filters(Struct, frozen=True):
    query: str = ""
    kind: str = ""
    tag: str = ""
    status: str = "active"
    explain: bool = False
    page: int = 1

    def statuses(self) -> tuple[Status, ...]:
        """The statuses shown (empty: every one)."""
        return () if self.status == "all" else (Status(self.status),)

    def params(self, **changes: object) -> dict[str, str]:
        """The filters as URL parameters, with `changes` applied; defaults left out."""
        values = {
            "q": self.query,
            "kind": self.kind,
            "tag": self.tag,
            "status": "" if self.status == "active" else self.status,
            "explain": "1" if self.explain else "",
            "page": "" if self.page == 1 else str(self.page),
        }
        values |= {name: str(value) for name, value in changes.items()}
        return {name: value for name, value in values.items() if value}


class Listing(Struct, frozen=True):
    records: tuple[Record, ...]
    hits: tuple[SearchHit, ...]  # set (and `records` empty) when a query was searched
    total: int  # of the listing before paging (of the hits when searching)
    pages: int
    tags: tuple[tuple[str, int], ...]  # tags of the listed records, most used first
    degraded: str | None = None


def read_filters(params: dict[str, str]) -> Filters:
    """The filters in the URL's parameters, or one sentence saying which value is wrong."""
    query = params.get("q", "").strip()
    if len(query) > MAX_QUERY:
        raise InvalidInputError(f"The search is over {MAX_QUERY} characters; shorten it.")
    kind = params.get("kind", "")
    if kind and kind not in {k.value for k in Kind}:
        raise InvalidInputError(
            f"There is no kind {kind!r}; choose one of {', '.join(k.value for k in Kind)}."
        )
    status = params.get("status", "") or "active"
    if status not in STATUSES:
        raise InvalidInputError(
            f"There is no status {status!r}; choose one of {', '.join(STATUSES)}."
        )
    page = params.get("page", "") or "1"
    if not page.isdigit() or not 1 <= int(page) <= MAX_PAGE_NUMBER:
        raise InvalidInputError(f"The page must be a number from 1 to {MAX_PAGE_NUMBER}.")
    return Filters(
        query=query,
        kind=kind,
        tag=params.get("tag", "").strip(),
        status=status,
        explain=params.get("explain") in ("1", "on", "true"),
        page=int(page),
    )


def list_records(app: App, project: Project, filters: Filters) -> Listing:
    """What the record list shows for `filters`."""
    if filters.query:
        return _search(app, project, filters)
    kinds = (Kind(filters.kind),) if filters.kind else ()

    def page_at(number: int) -> RecordPage:
        return app.record_pages.page(
            project,
            kinds=kinds,
            statuses=filters.statuses(),
            tag=filters.tag or None,
            offset=(number - 1) * PAGE_SIZE,
            limit=PAGE_SIZE,
        )

    shown = page_at(filters.page)
    pages = max(1, -(-shown.total // PAGE_SIZE))
    if filters.page > pages:  # past the end: the last page
        shown = page_at(pages)
    return Listing(shown.records, (), shown.total, pages, shown.tags)


def _search(app: App, project: Project, filters: Filters) -> Listing:
    statuses = filters.statuses()
    query = SearchQuery(
        text=filters.query,
        kinds=(Kind(filters.kind),) if filters.kind else (),
        tags=(filters.tag,) if filters.tag else (),
        limit=SEARCH_LIMIT,
        include_superseded=Status.SUPERSEDED in statuses or not statuses,
        include_archived=Status.ARCHIVED in statuses or not statuses,
    )
    result = app.search.search(project, query)
    hits = tuple(h for h in result.hits if not statuses or h.record.status in statuses)
    tags = Counter(tag for h in hits for tag in h.record.tags)
    return Listing((), hits, len(hits), 1, _top(tags), result.degraded)


def _top(tags: Counter[str]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(tags.items(), key=lambda item: (-item[1], item[0]))[:200])
