"""A package index's simple API (PEP 503 pages, PEP 691 JSON): the URL of one file of one
project, as pip would find it."""

import json
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit

from contextd.embeddings.deadline import Deadline, DeadlinePassed

__all__ = ["MAX_PAGE_BYTES", "IndexUnreachable", "PageTooLarge", "find_file_url"]

MAX_PAGE_BYTES = 32 << 20  # PyPI's largest project pages are a few MB

_ACCEPT = (
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "
    "text/html;q=0.01"
)


class IndexUnreachable(Exception):
    """The index did not answer, or answered with an error; the text says which."""


class PageTooLarge(Exception):
    """The project's page went on past MAX_PAGE_BYTES."""


def find_file_url(
    index: str, project: str, filename: str, client: Any, deadline: Deadline
) -> str | None:
    """The URL of `filename` on `project`'s page of `index`, None when the page lists no such
    file (or the index has no such project). `client` is an httpx.Client; closed here.

    Raises:
        IndexUnreachable: no answer, a server error, or an index that is not http(s).
        PageTooLarge: the page is larger than any index's page is.
        DeadlinePassed: the page was still coming when the deadline passed.
    """
    import httpx

    scheme = urlsplit(index).scheme
    if scheme not in ("http", "https"):
        raise IndexUnreachable(f"a {scheme or 'schemeless'} index URL, not http(s)")
    page = f"{index.rstrip('/')}/{project}/"
    try:
        with (
            client,
            client.stream(
                "GET", page, headers={"Accept": _ACCEPT}, timeout=deadline.timeout()
            ) as response,
        ):
            if response.status_code == 404:
                return None
            if response.status_code != 200:
                raise IndexUnreachable(f"HTTP {response.status_code}")
            body = _read_page(response, deadline)
            base = str(response.url)
            kind = response.headers.get("content-type", "").split(";")[0].strip()
    except httpx.TimeoutException:
        if deadline.left() <= 0:
            raise DeadlinePassed from None
        raise IndexUnreachable("ReadTimeout") from None
    except httpx.HTTPError as exc:
        raise IndexUnreachable(type(exc).__name__) from exc
    text = body.decode("utf-8", errors="replace")
    if kind.endswith("+json") or kind == "application/json":
        links = _json_links(text)
    else:
        links = _html_links(text)
    for href in links:
        url = urldefrag(urljoin(base, href)).url
        if urlsplit(url).path.rsplit("/", 1)[-1] == filename:
            return url
    return None


def _read_page(response: Any, deadline: Deadline) -> bytes:
    body = bytearray()
    for block in response.iter_bytes():  # as it arrives: a chunk size would wait to fill it
        body += block
        if len(body) > MAX_PAGE_BYTES:
            raise PageTooLarge
        deadline.check()
    return bytes(body)


def _json_links(text: str) -> list[str]:
    try:
        files = json.loads(text).get("files", [])
        return [str(entry["url"]) for entry in files if isinstance(entry, dict)]
    except (ValueError, AttributeError, KeyError, TypeError):
        return []


def _html_links(text: str) -> list[str]:
    class Anchors(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.hrefs: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            href = dict(attrs).get("href")
            if tag == "a" and href:
                self.hrefs.append(href)

    parser = Anchors()
    parser.feed(text)
    return parser.hrefs
