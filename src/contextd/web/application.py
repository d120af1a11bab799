"""The ASGI app: routes, static files and the Guard in front of everything."""

from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from contextd.app import App
from contextd.following import FollowedApp
from contextd.web import actions, pages
from contextd.web.access import Access
from contextd.web.guard import Guard
from contextd.web.rendering import error_page

__all__ = ["build_app"]

STATIC = Path(__file__).parent / "static"


def _routes(write: bool) -> list[BaseRoute]:
    routes: list[BaseRoute] = [
        Route("/", pages.projects),
        Route("/p/{slug}/records", pages.records),
        Route("/p/{slug}/sessions", pages.sessions),
        Route("/p/{slug}/quality", pages.quality),
        Route("/p/{slug}/review", pages.review),
        Route("/r/{record_id}", pages.record),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    if write:  # without --write these routes do not exist
        routes += [
            Route("/r/{record_id}/edit", actions.edit_form),
            Route("/r/{record_id}/edit", actions.edit, methods=["POST"]),
            Route("/r/{record_id}/verify", actions.verify, methods=["POST"]),
            Route("/r/{record_id}/archive", actions.archive, methods=["POST"]),
            Route("/r/{record_id}/unarchive", actions.unarchive, methods=["POST"]),
            Route("/r/{record_id}/supersede", actions.supersede, methods=["POST"]),
            Route("/p/{slug}/review/{held_id}/approve", actions.approve, methods=["POST"]),
            Route("/p/{slug}/review/{held_id}/reject", actions.reject, methods=["POST"]),
        ]
    return routes


async def _not_found(request: Request, exc: Exception) -> Response:
    return error_page(404, f"There is no page at {request.url.path}; start from the projects.")


async def _not_allowed(request: Request, exc: Exception) -> Response:
    return error_page(405, f"{request.method} is not used at {request.url.path}.")


def build_app(core: App, access: Access) -> Starlette:
    """The web view over `core`, answering only requests `access` lets through."""
    app = Starlette(
        routes=_routes(access.write),
        middleware=[Middleware(Guard, access=access)],
        exception_handlers={404: _not_found, 405: _not_allowed},
    )
    app.state.core = FollowedApp(core)
    app.state.access = access
    return app
