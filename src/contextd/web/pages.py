"""The pages: projects, a project's records (list and search), one record with its history,
sessions and checkpoints, quality and staleness. Reads only, through the App's services."""

from collections import Counter
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from contextd.app import App
from contextd.core.reading.reader import MAX_DAYS
from contextd.core.upkeep.quality import scan_quality
from contextd.core.writing.review import whose
from contextd.errors import InvalidInputError, NotFoundError
from contextd.models import Kind, Project, Record, Status, body_to_dict
from contextd.web.chain import history
from contextd.web.listing import STATUSES, list_records, read_filters
from contextd.web.rendering import page, safe_view
from contextd.web.timeline import entries, strip

__all__ = [
    "DONE",
    "core",
    "project_by_slug",
    "projects",
    "quality",
    "record",
    "records",
    "review",
    "review_page",
    "sessions",
]

KINDS = tuple(k.value for k in Kind)
QUALITY_ROWS = 100  # rows shown per list; the counts cover every one
# What a finished change says on the page it lands on (the URL carries only the key).
DONE = {
    "verified": "Verified: the record is stamped as checked today.",
    "archived": "Archived: the record left retrieval (unarchive brings it back).",
    "unarchived": "Restored: the record is back.",
    "superseded": "Superseded: this record is NOT CURRENT now; its successor is current truth.",
    "edited": "Saved.",
    "approved": "Approved: the draft is memory now.",
    "rejected": "Rejected: the draft will not become memory.",
}


def core(request: Request) -> App:
    app: App = request.app.state.core.current()  # config.toml as it is now
    return app


def project_by_slug(app: App, slug: str) -> Project:
    for project in app.projects.list_projects():
        if project.slug == slug:
            return project
    raise NotFoundError(f"No project {slug!r} in this store; the projects page lists them.")


@safe_view
def projects(request: Request) -> Response:
    inventory = core(request).inventory()
    context = {"inventory": inventory, "kinds": list(Kind), "active": Status.ACTIVE}
    return page(request, "projects.html", context)


@safe_view
def records(request: Request) -> Response:
    app = core(request)
    project = project_by_slug(app, request.path_params["slug"])
    filters = read_filters(dict(request.query_params))
    listing = list_records(app, project, filters)
    shown = [h.record for h in listing.hits] or list(listing.records)
    context = {
        "project": project,
        "filters": filters,
        "listing": listing,
        "shorts": app.reader.handles([r.id for r in shown]),
        "kinds": KINDS,
        "statuses": STATUSES,
    }
    fragment = request.headers.get("hx-request") == "true"
    return page(request, "_results.html" if fragment else "records.html", context)


@safe_view
def record(request: Request) -> Response:
    return record_page(request, request.path_params["record_id"])


def record_page(request: Request, reference: str, **extra: Any) -> Response:
    """One record in full; `extra` adds an error (and its status) after a refused change."""
    app = core(request)
    detail = app.reader.detail(reference)
    found = detail.record
    related = [_related(app, rid) for rid in found.related_to]
    chain = history(app.reader, found)
    linked = [r.id for r in (found, *(n.record for n in chain.nodes))]
    linked += [r.id for r in related if isinstance(r, Record)]
    context = {
        "detail": detail,
        "record": found,
        "body": body_to_dict(found.body),
        "project": app.projects.get(found.project_id) if found.project_id else None,
        "related": related,
        "chain": chain,
        "shorts": app.reader.handles(linked),
        "done": DONE.get(request.query_params.get("done", "")),
        "error": None,
    } | extra
    return page(request, "record.html", context, status_code=extra.get("status", 200))


def _related(app: App, record_id: str) -> Record | str:
    try:
        return app.reader.get(record_id)
    except NotFoundError:
        return record_id  # a link to a record deleted since


@safe_view
def sessions(request: Request) -> Response:
    app = core(request)
    project = project_by_slug(app, request.path_params["slug"])
    listed = app.sessions.list_sessions(project, limit=100)
    checkpoints = app.reader.list_records(
        project, kinds=(Kind.CHECKPOINT,), include_inactive=True, limit=200
    )
    timeline = entries(listed, [c for c in checkpoints if not c.is_global])
    context = {
        "project": project,
        "timeline": timeline,
        "strip": strip(timeline),
        "shorts": app.sessions.short_ids([s.id for s in listed]),
    }
    return page(request, "sessions.html", context)


@safe_view
def quality(request: Request) -> Response:
    app = core(request)
    project = project_by_slug(app, request.path_params["slug"])
    raw = request.query_params.get("days", "")
    if raw and (not raw.isdigit() or int(raw) > MAX_DAYS):
        raise InvalidInputError(f"The days must be a whole number from 0 to {MAX_DAYS}.")
    days = int(raw) if raw else app.settings.lifecycle.stale_days
    issues = scan_quality(app.reader, project, days)
    # The scan's stale records are `contextd stale`'s: oldest-verified first.
    stale = sorted((i.record for i in issues if i.kind == "stale"), key=lambda r: r.verified_at)
    others = [i for i in issues if i.kind != "stale"]
    shown_stale, shown_issues = stale[:QUALITY_ROWS], others[:QUALITY_ROWS]
    ids = [i.record.id for i in shown_issues] + [r.id for r in shown_stale]
    ids += [i.other for i in shown_issues if i.other]
    context = {
        "project": project,
        "issues": shown_issues,
        "issue_count": len(others),
        "counts": Counter(i.kind for i in others),
        "stale": shown_stale,
        "stale_count": len(stale),
        "days": days,
        "shorts": app.reader.handles(ids),
    }
    return page(request, "quality.html", context)


@safe_view
def review(request: Request) -> Response:
    return review_page(request, request.path_params["slug"])


def review_page(request: Request, slug: str, **extra: Any) -> Response:
    """What agents wrote, waiting for a person ([capture] review); `extra` adds an error (and
    its status) after a refused decision."""
    app = core(request)
    project = project_by_slug(app, slug)
    waiting = app.review.waiting(project)
    context = {
        "project": project,
        "waiting": [(h, body_to_dict(h.draft.body), whose(h, app.review.viewer)) for h in waiting],
        "policy": app.settings.capture.review,
        "readings": (
            app.capture.readings(project) if app.settings.capture.extractor != "none" else []
        ),
        "done": DONE.get(request.query_params.get("done", "")),
        "error": None,
    } | extra
    return page(request, "review.html", context, status_code=extra.get("status", 200))
