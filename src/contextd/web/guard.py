"""The ASGI middleware every request passes first: the Host check (against DNS rebinding), the
launch token (in the URL once, then an HttpOnly SameSite=Strict cookie), the checks on
state-changing requests, and the security headers of every response."""

import time
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qsl, urlencode

from starlette.datastructures import MutableHeaders
from starlette.responses import RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from contextd.provenance import changes_via
from contextd.web.access import Access
from contextd.web.rendering import error_page

__all__ = ["MAX_BODY", "Guard"]

MAX_BODY = 512 * 1024  # a record is at most 100,000 characters (4 bytes each in UTF-8)

# Scripts and styles come only from the server itself; nothing inline, no eval, no frames.
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
_HEADERS = {
    "content-security-policy": _CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    # No Referer leaves for another site. (Not "no-referrer": Chrome then sends `Origin: null`
    # on the view's own form posts, which the Origin check must refuse.)
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}


class Guard:
    """Refuse what is not for this server; let the rest through with hardened headers."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        refusal = self._refusal(scope)
        if refusal is not None:
            await _hardened(refusal, started)(scope, receive, send)
            return

        async def send_hardened(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in _HEADERS.items():
                    headers[name] = value
                elapsed = (time.perf_counter() - started) * 1000
                headers["server-timing"] = f"app;dur={elapsed:.1f}"
            await send(message)

        with changes_via("web"):
            await self.app(scope, receive, send_hardened)

    def _refusal(self, scope: Scope) -> Response | None:
        """The response that refuses this request, or None to let it through."""
        headers = _headers(scope)
        host = headers.get("host")
        if not self.access.host_ok(host):
            return error_page(
                400,
                f"This server answers only at 127.0.0.1:{self.access.port}; open the address "
                "`contextd ui` printed.",
            )
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if "token" in query:
            return self._exchange(scope, query)
        if not self.access.token_ok(_cookie(headers, self.access.cookie_name)):
            return _no_token()
        method = scope["method"]
        if method in ("GET", "HEAD"):
            return None
        if method != "POST":
            return error_page(405, f"{method} is not used here.")
        return self._post_refusal(headers, host)

    def _exchange(self, scope: Scope, query: dict[str, str]) -> Response:
        """The token from the URL becomes a cookie, and the browser is sent to the same page
        without it, so the token leaves the address bar (and any later Referer)."""
        if scope["method"] not in ("GET", "HEAD") or not self.access.token_ok(query.pop("token")):
            return _no_token()
        target = scope["path"] + (f"?{urlencode(query)}" if query else "")
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(
            self.access.cookie_name,
            self.access.token,
            httponly=True,
            samesite="strict",
            path="/",
        )
        return response

    def _post_refusal(self, headers: dict[str, str], host: str | None) -> Response | None:
        if not self.access.write:
            return error_page(
                403,
                "This view is read-only; start it with `contextd ui --write` to change records.",
            )
        site = headers.get("sec-fetch-site")
        if not self.access.origin_ok(headers.get("origin"), host) or site not in (
            None,
            "same-origin",
        ):
            return error_page(403, "Refused a change that did not come from this view's own pages.")
        length = headers.get("content-length")
        if length is None or not length.isdigit():
            return error_page(411, "A change must say its length; send it from the view's form.")
        if int(length) > MAX_BODY:
            return error_page(413, f"The form is over {MAX_BODY // 1024} KB; shorten the text.")
        return None


def _headers(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name (the last one wins)."""
    return {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}


def _cookie(headers: dict[str, str], name: str) -> str | None:
    raw = headers.get("cookie")
    if not raw:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except CookieError:  # a malformed Cookie header is the same as none
        return None
    morsel = jar.get(name)
    return morsel.value if morsel else None


def _no_token() -> Response:
    return error_page(
        403,
        "This view needs the address `contextd ui` printed, with its token; open that link "
        "(a new launch prints a new one).",
    )


def _hardened(response: Response, started: float) -> Response:
    for name, value in _HEADERS.items():
        response.headers[name] = value
    response.headers["server-timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.1f}"
    return response
