"""The view in a real browser (headless Chromium): every page loads without a console error,
search and its explanation, following a supersession chain through the graph, verifying with
--write, stored HTML shown as text, and cross-site posts refused."""

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contextd.app import open_app
from contextd.config import load_settings
from tests.web.browser import chromium, console_errors, missing
from tests.web.conftest import SCRIPT_TITLE, Store
from tests.web.served import Served, running_ui

pytestmark = pytest.mark.skipif(missing() is not None, reason=missing() or "")


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("SE_OFFLINE", "true")  # never let Selenium fetch a driver
    with chromium() as driver:
        yield driver


@pytest.fixture
def reader(repo: Path, store: Store) -> Iterator[Served]:
    with running_ui(repo) as served:
        yield served


@pytest.fixture
def writer(repo: Path, store: Store) -> Iterator[Served]:
    with running_ui(repo, "--write") as served:
        yield served


def _wait(driver: Any, condition: Any, timeout: float = 15) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


def _css(driver: Any, selector: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, selector)


def _htmx_ready(driver: Any) -> None:
    """Wait until htmx has wired the page's elements (it starts after the page has loaded)."""
    _wait(
        driver, lambda d: d.execute_script("return !!document.querySelector('[data-htmx-powered]')")
    )


def _verified_at(repo: Path, record_id: str) -> str:
    with open_app(load_settings(cwd=repo)) as app:
        return app.reader.get(record_id).verified_at


def test_every_page_loads_without_console_errors(
    browser: Any, reader: Served, store: Store
) -> None:
    browser.get(reader.url)
    assert browser.current_url == reader.base + "/"  # the token left the address bar
    assert browser.execute_script("return document.cookie") == ""  # HttpOnly
    pages = {
        "/": "Projects",
        "/p/orbit/records": "Records",
        "/p/orbit/records?status=all&kind=decision": "Records",
        f"/r/{store.postgres}": "Use PostgreSQL SKIP LOCKED for the task queue",
        "/p/orbit/sessions": "Sessions and checkpoints",
        "/p/orbit/quality?days=0": "Quality and staleness",
    }
    for path, heading in pages.items():
        browser.get(reader.base + path)
        assert _css(browser, "h1").text.startswith(heading), path
        assert console_errors(browser) == [], path


def test_search_shows_hits_and_explains_them_on_demand(
    browser: Any, reader: Served, store: Store
) -> None:
    browser.get(reader.url.replace("/?", "/p/orbit/records?"))
    _htmx_ready(browser)
    _css(browser, "#q").send_keys("task queue")
    _wait(browser, lambda d: " for “task queue”" in _css(d, "#count").text)
    first = _css(browser, "#hits tbody tr a.rid")
    assert first.get_attribute("href").endswith(f"/r/{store.nats}")
    assert "semantic" not in _css(browser, "#results").text
    _css(browser, "#explain").click()
    _wait(browser, lambda d: "semantic" in _css(d, "#results").text)
    assert "fts" in _css(browser, "#hits").text
    assert console_errors(browser) == []


def test_following_a_supersession_chain_through_the_graph(
    browser: Any, reader: Served, store: Store
) -> None:
    browser.get(reader.url.replace("/?", f"/r/{store.redis}?"))
    assert "NOT CURRENT" in _css(browser, "h1").text
    assert "current truth is Use NATS JetStream" in _css(browser, "#successor").text
    _css(browser, f'svg a.node[data-id="{store.postgres}"]').click()
    _wait(browser, lambda d: d.current_url.endswith(f"/r/{store.postgres}"))
    assert _css(browser, "h1").text.startswith("Use PostgreSQL SKIP LOCKED")
    _css(browser, f'svg a.node[data-id="{store.nats}"]').click()
    _wait(browser, lambda d: d.current_url.endswith(f"/r/{store.nats}"))
    assert _css(browser, "h1").text == "Use NATS JetStream for the task queue"
    assert "NOT CURRENT" not in _css(browser, "h1").text
    assert console_errors(browser) == []


def test_a_record_holding_a_script_shows_it_as_text(
    browser: Any, reader: Served, store: Store
) -> None:
    browser.get(reader.url.replace("/?", f"/r/{store.script}?"))
    assert _css(browser, "h1").text == SCRIPT_TITLE
    assert browser.execute_script("return window.pwned === undefined")
    browser.get(reader.base + "/p/orbit/records")
    assert SCRIPT_TITLE in _css(browser, "#records").text
    assert browser.execute_script("return window.pwned === undefined")
    assert console_errors(browser) == []


def test_a_browser_without_the_token_is_refused(browser: Any, reader: Served) -> None:
    browser.get(reader.base + "/p/orbit/records")
    assert "needs the address `contextd ui` printed" in _css(browser, ".error").text


def test_verify_with_write(browser: Any, writer: Served, store: Store, repo: Path) -> None:
    before = _verified_at(repo, store.nats)
    browser.get(writer.url.replace("/?", f"/r/{store.nats}?"))
    _css(browser, "#verify").click()
    _wait(browser, lambda d: "Verified" in _css(d, "#done").text)
    assert _verified_at(repo, store.nats) > before
    # inline, through htmx, from the staleness list
    before = _verified_at(repo, store.script)
    browser.get(writer.base + "/p/orbit/quality?days=0")
    _htmx_ready(browser)
    cell = f"#act-{store.script}"
    _css(browser, f"{cell} button").click()
    _wait(browser, lambda d: "Verified" in _css(d, cell).text)
    assert _verified_at(repo, store.script) > before
    assert console_errors(browser) == []


class _Attacker(http.server.ThreadingHTTPServer):
    page = b""


class _AttackerPage(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        assert isinstance(self.server, _Attacker)
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(self.server.page)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.parametrize("attacker_host", ["127.0.0.1", "localhost"])
def test_a_cross_site_post_is_refused(
    browser: Any, writer: Served, store: Store, repo: Path, attacker_host: str
) -> None:
    browser.get(writer.url)  # the victim holds the cookie
    # Even a form that knew the CSRF token is refused by its Origin (127.0.0.1 on another port
    # is the same site, so SameSite lets the cookie through) or by the cookie staying home
    # (localhost is another site).
    csrf = _form_token(browser, writer, store)
    attacker = _Attacker(("127.0.0.1", 0), _AttackerPage)
    attacker.page = (
        f'<form method="post" action="{writer.base}/r/{store.nats}/verify">'
        f'<input name="csrf" value="{csrf}"></form>'
        "<script>document.forms[0].submit()</script>"
    ).encode()
    thread = threading.Thread(target=attacker.serve_forever, daemon=True)
    thread.start()
    before = _verified_at(repo, store.nats)
    try:
        browser.get(f"http://{attacker_host}:{attacker.server_address[1]}/")
        _wait(browser, lambda d: d.current_url.startswith(writer.base))
        refusal = _css(browser, ".error").text
    finally:
        attacker.shutdown()
        attacker.server_close()
    assert "Refused a change" in refusal or "needs the address" in refusal
    assert _verified_at(repo, store.nats) == before


def _form_token(browser: Any, served: Served, store: Store) -> str:
    browser.get(f"{served.base}/r/{store.nats}")
    token: str = _css(browser, '#actions input[name="csrf"]').get_attribute("value")
    return token
