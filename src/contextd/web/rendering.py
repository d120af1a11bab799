"""Templates and the one place a failure becomes a page: a sentence, never a traceback.

Every template is rendered with autoescape on, so stored text reaches the browser only as
text; nothing in the templates marks stored values as safe.
"""

import logging
import os
from collections.abc import Callable
from datetime import UTC, datetime
from functools import wraps
from pathlib import Path
from typing import Any, ParamSpec

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from contextd.clock import age, duration
from contextd.core.upkeep.quality import command_for
from contextd.errors import ConflictError, ContextdError, InvalidInputError, NotFoundError
from contextd.text.grammar import counted
from contextd.web.forms import field_label

__all__ = ["error_page", "failure_status", "page", "render", "safe_view", "when"]

log = logging.getLogger("contextd.web")
P = ParamSpec("P")

_ENV = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def when(stamp: str | None) -> str:
    """A stored instant as a person reads it: date and minute, UTC."""
    return "" if not stamp else stamp[:16].replace("T", " ")


_ENV.filters["age"] = lambda stamp: age(stamp) if stamp else "never"
_ENV.filters["when"] = when
_ENV.filters["day"] = lambda stamp: (stamp or "")[:10]
_ENV.filters["label"] = field_label
_ENV.filters["fix"] = command_for
_ENV.filters["duration"] = duration
_ENV.filters["counted"] = counted


def render(template: str, context: dict[str, Any]) -> str:
    return _ENV.get_template(template).render(**context)


def page(
    request: Request, template: str, context: dict[str, Any], status_code: int = 200
) -> HTMLResponse:
    """A full page (or, for htmx, a fragment template) with what every page shows."""
    shared = {
        "write": request.app.state.access.write,
        "csrf": request.app.state.access.csrf,
        "year": datetime.now(UTC).year,
        "restart_note": request.app.state.core.restart_note,
    }
    return HTMLResponse(render(template, shared | context), status_code=status_code)


def failure_status(exc: ContextdError) -> int:
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, InvalidInputError):
        return 400
    if isinstance(exc, ConflictError):
        return 409
    return 500


def error_page(status_code: int, sentence: str, *, fragment: bool = False) -> HTMLResponse:
    """One clear sentence, as a page or (for htmx) as the fragment swapped in."""
    template = "_error.html" if fragment else "error.html"
    body = render(template, {"status": status_code, "message": sentence, "write": False})
    return HTMLResponse(body, status_code=status_code)


def safe_view(view: Callable[P, Response]) -> Callable[P, Response]:
    """Run a view so that any failure renders as one sentence: a ContextdError says what was
    wrong; anything else is an internal failure, logged without the request's query string."""

    @wraps(view)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> Response:
        request = next(a for a in args if isinstance(a, Request))
        fragment = request.headers.get("hx-request") == "true"
        try:
            return view(*args, **kwargs)
        except ContextdError as exc:
            message = " ".join(str(exc).split("\n"))
            return error_page(failure_status(exc), message, fragment=fragment)
        except Exception as exc:
            if os.environ.get("CONTEXTD_DEBUG"):
                log.exception("failure on %s %s", request.method, request.url.path)
            else:
                log.error("failure on %s %s: %s", request.method, request.url.path, type(exc))
            return error_page(
                500,
                f"contextd failed unexpectedly ({type(exc).__name__}); run `contextd ui` with "
                "CONTEXTD_DEBUG=1 to log the details, and report it.",
                fragment=fragment,
            )

    return guarded
