"""Search and recall over a project's records and the global ones."""

from pathlib import Path

from msgspec import Struct
from msgspec.structs import replace

from contextd.config import ContextSettings
from contextd.core.recall.packing import SEPARATOR, estimate_tokens, pack
from contextd.core.recall.presentation import fence, fence_overhead, one_line
from contextd.core.recall.scope_guard import relative_to_project
from contextd.errors import InvalidInputError, InvalidQueryError
from contextd.limits import MAX_SEARCH_LIMIT
from contextd.models import (
    Kind,
    Project,
    Record,
    SearchHit,
    SearchQuery,
    SearchResult,
    Status,
    body_to_dict,
)
from contextd.retrieval.search import Retriever

__all__ = [
    "DATES_BY",
    "Recall",
    "SearchService",
    "cut_passage",
    "passage",
]

MAX_QUERY_CHARS = 2000
DATES_BY = ("created", "verified")  # which time of a record since/before compare with


class Recall(Struct, frozen=True):
    """What an agent receives: the passages that fit the budget, and what was left out."""

    query: str
    hits: tuple[SearchHit, ...]  # the packed ones, in rank order
    text: str
    budget: int
    tokens: int
    omitted: int
    degraded: str | None


class SearchService:
    def __init__(self, retriever: Retriever, context: ContextSettings) -> None:
        self._retriever = retriever
        self._context = context

    def search(self, project: Project, query: SearchQuery) -> SearchResult:
        """Ranked hits for `query`; superseded and archived records only when asked for. With
        no words, the records its filters let through (at least one filter is needed)."""
        if not 1 <= query.limit <= MAX_SEARCH_LIMIT:
            raise InvalidInputError(f"The limit must be from 1 to {MAX_SEARCH_LIMIT}.")
        if len(query.text) > MAX_QUERY_CHARS:
            raise InvalidQueryError(
                f"The query is {len(query.text)} characters; the limit is {MAX_QUERY_CHARS}: "
                "search with the words that matter."
            )
        if not query.text.strip() and not _filters(query):
            raise InvalidQueryError(
                "Give a query, or a filter (a tag, kind, category, file path or date) to list "
                "the records it lets through."
            )
        if query.dates_by not in DATES_BY:
            raise InvalidInputError(
                f"Dates count from one of {', '.join(DATES_BY)}, not {query.dates_by!r}."
            )
        if query.path:
            query = replace(query, path=project_path(project, query.path))
        return self._retriever.search(query, project.id, project.checkout)

    def learn(self, project: Project, query: str, record: Record) -> None:
        """Remember that `record` answered `query`: it comes first for that query, and similar
        later queries rank it higher.

        Raises:
            InvalidInputError: the query is empty, too long, or holds a secret (it is stored).
        """
        from contextd.core.writing.validation import (
            checked_text,
        )  # the write path: not for the hooks

        if not query.strip():
            raise InvalidInputError("Give the query the record answered.")
        query = checked_text("query", query, label="query", limit=MAX_QUERY_CHARS)
        self._retriever.learn(query, record, project.id)

    def recall(self, project: Project, query: SearchQuery, budget: int | None = None) -> Recall:
        """The best passages for `query` packed into `budget` tokens (default from config)."""
        limit = budget if budget is not None else self._context.max_context_tokens
        if limit < 50:
            raise InvalidInputError("The budget must be at least 50 tokens.")
        wide = replace(query, limit=min(self._context.max_memories, MAX_SEARCH_LIMIT))
        result = self.search(project, wide)
        cut = self._context.max_entry_tokens
        packed, blocks = pack(
            ((hit, passage(hit, cut)) for hit in result.hits), limit, reserved=fence_overhead()
        )
        text = fence(SEPARATOR.join(blocks)) if blocks else ""
        omitted = len(result.hits) - len(packed)
        return Recall(
            query.text,
            tuple(packed),
            text,
            limit,
            estimate_tokens(text) if text else 0,
            omitted,
            result.degraded,
        )


def _filters(query: SearchQuery) -> bool:
    """Whether `query` narrows the records by something other than words."""
    return bool(
        query.kinds or query.tags or query.category or query.since or query.before or query.path
    )


def project_path(project: Project, given: str) -> str:
    """A file named for a search as a path inside the project: an absolute one made relative
    to the project's folder holding it, a relative one taken as relative to the project."""
    path = Path(given)
    if not path.is_absolute():
        return path.as_posix()
    inside = relative_to_project(project, path)
    if inside is None:
        raise InvalidInputError(
            f"{given} is not inside a folder of project {project.name}; "
            "give a path in the project (relative to its root, or absolute)."
        )
    return inside


def passage(hit: SearchHit, max_tokens: int | None = None) -> str:
    """One hit as the text an agent reads: header line, then the fields that say why, each
    one line (the caller puts it in a fence: see contextd.core.recall.presentation); cut to
    `max_tokens` with a pointer to the whole record when longer."""
    record = hit.record
    label = record.category if record.kind is Kind.MEMORY and record.category else str(record.kind)
    flags = []
    if record.status is Status.SUPERSEDED:
        flags.append(f"NOT CURRENT, superseded by {record.superseded_by}")
    elif record.status is Status.ARCHIVED:
        flags.append("archived")
    if hit.code_change is not None:
        flags.append(f"STALE: {hit.code_change.describe()}; verify or update it")
    if hit.linked_from:
        flags.append(f"linked from {hit.linked_from}")
    if hit.tier == "group" or record.is_global:
        flags.append("group" if hit.tier == "group" else "global")
    head = f"[{label} {record.id} · verified {record.verified_at[:10]}"
    head += f" · {'; '.join(flags)}]" if flags else "]"
    lines = [head, one_line(record.title)]
    for name, value in body_to_dict(record.body).items():
        if isinstance(value, list) and value:
            lines.append(f"{name}: " + "; ".join(one_line(str(v)) for v in value))
        elif value:
            lines.append(f"{name}: {one_line(str(value))}")
    text = "\n".join(lines)
    return text if max_tokens is None else cut_passage(text, record.id, max_tokens)


def cut_passage(text: str, record_id: str, max_tokens: int) -> str:
    """`text` whole when it fits `max_tokens`, else its start (at a word break) and a line
    naming how to read the rest."""
    if estimate_tokens(text) <= max_tokens:
        return text
    note = (
        f"\n[cut at {max_tokens} tokens: get_entry {record_id} "
        f"(contextd show {record_id}) has the whole record]"
    )
    room = max(max_tokens * 4 - len(note) - 2, 0)
    head = text[:room]
    if " " in head[room // 2 :] or "\n" in head[room // 2 :]:
        head = head[: max(head.rfind(" "), head.rfind("\n"))]
    return head.rstrip() + " …" + note
