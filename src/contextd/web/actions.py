"""The changes `--write` allows: verify, archive, unarchive, supersede and edit, each through
the same core writer as the CLI (same validation, secret and duplicate rules). The Guard has
already checked the method, Origin and length; here each form's CSRF token is checked."""

from collections.abc import Awaitable, Callable
from functools import wraps

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from contextd.errors import ContextdError
from contextd.models import Record, RecordEdit
from contextd.web.forms import edit_from_form, form_values, without_secrets
from contextd.web.pages import core, project_by_slug, record_page, review_page
from contextd.web.rendering import error_page, failure_status, page, safe_view

__all__ = [
    "approve", "archive", "edit", "edit_form", "reject", "supersede", "unarchive", "verify",
]  # fmt: skip

Handler = Callable[[Request, FormData], Response]


def write_action(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """Read the form (bounded), check its CSRF token, then run the change off the event loop."""

    @wraps(handler)
    async def run(request: Request) -> Response:
        fragment = request.headers.get("hx-request") == "true"
        try:
            form = await request.form(max_files=0, max_fields=64)
        except Exception:  # a malformed body: refused like any other bad form
            return error_page(400, "The form could not be read; send it again from the page.")
        if not request.app.state.access.csrf_ok(_text(form, "csrf")):
            return error_page(
                403,
                "Refused a change without this view's form token; reload the page and try again.",
                fragment=fragment,
            )
        return await run_in_threadpool(safe_view(handler), request, form)

    return run


def _text(form: FormData, name: str) -> str | None:
    value = form.get(name)
    return value if isinstance(value, str) else None


def _done(request: Request, record: Record, what: str) -> Response:
    """After a change: back to the record's page (or, for htmx, the row's new state)."""
    if request.headers.get("hx-request") == "true":
        return page(request, "_done.html", {"record": record, "what": what})
    return RedirectResponse(f"/r/{record.id}?done={what}", status_code=303)


def _refused(request: Request, exc: ContextdError) -> Response:
    """A refused change: the record's page again, with the one sentence saying why."""
    if request.headers.get("hx-request") == "true":
        return error_page(failure_status(exc), str(exc), fragment=True)
    return record_page(
        request, request.path_params["record_id"], error=str(exc), status=failure_status(exc)
    )


@write_action
def verify(request: Request, form: FormData) -> Response:
    try:
        record = core(request).writer.verify(request.path_params["record_id"])
    except ContextdError as exc:
        return _refused(request, exc)
    return _done(request, record, "verified")


@write_action
def archive(request: Request, form: FormData) -> Response:
    try:
        record = core(request).writer.archive(
            request.path_params["record_id"], _text(form, "reason")
        )
    except ContextdError as exc:
        return _refused(request, exc)
    return _done(request, record, "archived")


@write_action
def unarchive(request: Request, form: FormData) -> Response:
    try:
        record = core(request).writer.unarchive(request.path_params["record_id"])
    except ContextdError as exc:
        return _refused(request, exc)
    return _done(request, record, "unarchived")


@write_action
def supersede(request: Request, form: FormData) -> Response:
    try:
        old, _ = core(request).writer.supersede(
            request.path_params["record_id"], (_text(form, "by") or "").strip()
        )
    except ContextdError as exc:
        return _refused(request, exc)
    return _done(request, old, "superseded")


@safe_view
def edit_form(request: Request) -> Response:
    record = core(request).reader.get(request.path_params["record_id"])
    context = {"record": record, "values": form_values(record), "error": None, "emptied": []}
    return page(request, "edit.html", context)


@write_action
def edit(request: Request, form: FormData) -> Response:
    app = core(request)
    record = app.reader.get(request.path_params["record_id"])
    try:
        changes: RecordEdit = edit_from_form(record, form)
        updated = app.writer.update(record.id, changes)
    except ContextdError as exc:
        submitted = {name: _text(form, name) or "" for name in form_values(record)}
        values, emptied = without_secrets(submitted)
        context = {"record": record, "values": values, "error": str(exc), "emptied": emptied}
        return page(request, "edit.html", context, status_code=failure_status(exc))
    return _done(request, updated, "edited")


def _reviewed(request: Request, form: FormData, what: str) -> Response:
    """Approve or reject one waiting draft; back to the Review page either way."""
    app = core(request)
    slug, held = request.path_params["slug"], request.path_params["held_id"]
    try:
        project = project_by_slug(app, slug)
        if what == "approved":
            app.review.approve([held], project)
        else:
            app.review.reject([held], project, _text(form, "reason") or "")
    except ContextdError as exc:
        return review_page(request, slug, error=str(exc), status=failure_status(exc))
    return RedirectResponse(f"/p/{slug}/review?done={what}", status_code=303)


@write_action
def approve(request: Request, form: FormData) -> Response:
    return _reviewed(request, form, "approved")


@write_action
def reject(request: Request, form: FormData) -> Response:
    return _reviewed(request, form, "rejected")
