"""A package index's simple API (PEP 503 pages, PEP 691 JSON): the URL of one file of one
project, as pip would find it."""

import json
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit

__all__ = ["IndexUnreachable", "find_file_url"]

_ACCEPT = (
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "
    "text/html;q=0.01"
)


class IndexUnreachable(Exception):
    """The index did not answer, or answered with an error; the text says which."""


def find_file_url(index: str, project: str, filename: str, client: Any) -> str | None:
    """The URL of `filename` on `project`'s page of `index`, None when the page lists no such
    file (or the index has no such project). `client` is an httpx.Client; closed here.

    Raises:
        IndexUnreachable: no answer, a server error, or an index that is not http(s).
    """
    import httpx

    scheme = urlsplit(index).scheme
    if scheme not in ("http", "https"):
        raise IndexUnreachable(f"a {scheme or 'schemeless'} index URL, not http(s)")
    page = f"{index.rstrip('/')}/{project}/"
    try:
        with client:
            response = client.get(page, headers={"Accept": _ACCEPT})
    except httpx.HTTPError as exc:
        raise IndexUnreachable(type(exc).__name__) from exc
    if response.status_code == 404:
        return None
    if response.status_code != 200:
        raise IndexUnreachable(f"HTTP {response.status_code}")
    base = str(response.url)
    kind = response.headers.get("content-type", "").split(";")[0].strip()
    if kind.endswith("+json") or kind == "application/json":
        links = _json_links(response.text)
    else:
        links = _html_links(response.text)
    for href in links:
        url = urldefrag(urljoin(base, href)).url
        if urlsplit(url).path.rsplit("/", 1)[-1] == filename:
            return url
    return None


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
