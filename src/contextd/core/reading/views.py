"""Plain JSON-ready views of core results, shared by the CLI's --json and the MCP server."""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from contextd.models import (
    CodeChange,
    Project,
    Record,
    SearchHit,
    Similar,
    Status,
    body_to_dict,
)

if TYPE_CHECKING:  # types only: the MCP server imports this before its first tool call
    from contextd.core.reading.reader import RecordDetail

__all__ = [
    "NOT_CURRENT",
    "code_change_view",
    "detail_view",
    "hit_view",
    "project_view",
    "record_view",
    "similar_view",
    "written_view",
]

NOT_CURRENT = "NOT CURRENT"


def record_view(record: Record) -> dict[str, Any]:
    """Every stored field of a record; a superseded one is labelled NOT CURRENT."""
    view: dict[str, Any] = {
        "id": record.id,
        "kind": str(record.kind),
        "title": record.title,
        "status": str(record.status),
        "project_id": record.project_id,
        "category": record.category,
        "body": body_to_dict(record.body),
        "tags": list(record.tags),
        "retrieval_hints": list(record.retrieval_hints),
        "origin": str(record.origin),
        "priority": record.priority,
        "superseded_by": record.superseded_by,
        "related_to": list(record.related_to),
        "session_id": record.session_id,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "verified_at": record.verified_at,
    }
    if record.status is Status.SUPERSEDED:
        view["label"] = NOT_CURRENT
    if record.archived_reason:
        view["archived_reason"] = record.archived_reason
    return view


def detail_view(detail: "RecordDetail") -> dict[str, Any]:
    view = record_view(detail.record)
    if detail.successor is not None:
        view["successor"] = {"id": detail.successor.id, "title": detail.successor.title}
    if detail.current is not None:
        view["current"] = {"id": detail.current.id, "title": detail.current.title}
    view["supersedes"] = [{"id": r.id, "title": r.title} for r in detail.predecessors]
    if detail.group is not None:
        view["group"] = detail.group
    return view


def code_change_view(change: CodeChange) -> dict[str, Any]:
    return {
        "commit": change.commit,
        "committed_at": change.committed_at,
        "subject": change.subject,
        "path": change.path,
        "change": change.change,
    }


def hit_view(hit: SearchHit, *, explain: bool = False) -> dict[str, Any]:
    record = hit.record
    view: dict[str, Any] = {
        "id": record.id,
        "kind": str(record.kind),
        "title": record.title,
        "status": str(record.status),
        "score": round(hit.score, 4),
        "category": record.category,
        "tags": list(record.tags),
        "scope": hit.tier or ("global" if record.is_global else "project"),
        "superseded_by": record.superseded_by,
        "verified_at": record.verified_at,
    }
    if record.status is Status.SUPERSEDED:
        view["label"] = NOT_CURRENT
    if hit.linked_from:
        view["linked_from"] = hit.linked_from
    if hit.code_change is not None:
        view["stale"] = code_change_view(hit.code_change)
    if explain:
        terms = hit.terms
        view["explain"] = {
            name: round(getattr(terms, name), 4)
            for name in (
                "fts",
                "semantic",
                "priority",
                "recency",
                "project_match",
                "trust",
                "feedback",
                "status_multiplier",
            )
        }
    return view


def written_view(
    record: Record, similar: Sequence[Similar], *, held: bool = False, group: str | None = None
) -> dict[str, Any]:
    """A record just stored or changed, with the stored ones it resembles (advisory); `held`:
    waiting in the review queue instead; `group`: written into that project group."""
    view = record_view(record) | {"similar": [similar_view(s) for s in similar]}
    if held:
        view["held_for_review"] = True
    if group is not None:
        view["group"] = group
    return view


def similar_view(similar: Similar) -> dict[str, Any]:
    record = similar.record
    view: dict[str, Any] = {
        "id": record.id,
        "kind": str(record.kind),
        "title": record.title,
        "status": str(record.status),
        "similarity": round(similar.similarity, 3),
    }
    if record.status is Status.SUPERSEDED:
        view["label"] = NOT_CURRENT
    if similar.replaces:
        view["likely_replaces"] = similar.replaces
    return view


def project_view(project: Project) -> dict[str, Any]:
    return {
        "id": project.id,
        "slug": project.slug,
        "name": project.name,
        "git_remote": project.git_remote,
        "paths": list(project.paths),
        "created_at": project.created_at,
        "updated_at": project.updated_at,
    }
