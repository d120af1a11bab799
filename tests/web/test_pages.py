"""The pages over a real store: what each shows, stored text escaped, and bad input answered
with one sentence and the right status."""

import html
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from contextd.app import App
from contextd.core.reading.reader import RecordReader
from contextd.models import Kind, MemoryBody, RecordDraft
from tests.retrieval.test_relevance_gate import MATCHING, _store, _unrelated
from tests.web.conftest import SCRIPT_TITLE, Store


def _ids_in(html: str) -> list[str]:
    return re.findall(r'href="/r/([0-9a-f-]{36})"', html)


def test_the_projects_page_counts_each_project(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert '<a href="/p/orbit/records">orbit</a>' in page.text
    row = page.text[page.text.index('<a href="/p/orbit/records">') :]
    # current decisions and memories, checkpoints, and the two superseded records as "old"
    cells = re.findall(r'<td class="num">(\d+)</td>', row)[:6]
    assert cells == ["1", "1", "0", "0", "1", "2"]
    assert "Worker heartbeat completed" in page.text


def test_the_record_list_shows_current_records_newest_first(
    client: TestClient, store: Store
) -> None:
    page = client.get("/p/orbit/records")
    ids = _ids_in(page.text)
    assert ids == [store.checkpoint, store.script, store.nats]
    every = _ids_in(client.get("/p/orbit/records?status=all").text)
    assert set(every) == {store.checkpoint, store.script, store.nats, store.postgres, store.redis}
    old = client.get("/p/orbit/records?status=superseded").text
    assert set(_ids_in(old)) == {store.redis, store.postgres}
    assert old.count("NOT CURRENT") >= 2


def test_filters_by_kind_and_tag(client: TestClient, store: Store) -> None:
    decisions = _ids_in(client.get("/p/orbit/records?kind=decision&status=all").text)
    assert set(decisions) == {store.redis, store.postgres, store.nats}
    tagged = _ids_in(client.get("/p/orbit/records?tag=queue").text)
    assert tagged == [store.nats]
    assert "Nothing matches." in client.get("/p/orbit/records?tag=nope").text


def test_search_ranks_and_explains_on_demand(client: TestClient, store: Store) -> None:
    plain = client.get("/p/orbit/records", params={"q": "task queue"}).text
    assert _ids_in(plain)[0] == store.nats
    assert "semantic" not in plain
    explained = client.get("/p/orbit/records", params={"q": "task queue", "explain": "1"}).text
    for term in ("fts", "semantic", "priority", "recency", "project", "trust", "feedback"):
        assert f"{term} " in explained
    history = client.get("/p/orbit/records", params={"q": "Redis pub/sub", "status": "all"}).text
    assert store.redis in _ids_in(history)


def test_htmx_gets_only_the_results_fragment(client: TestClient) -> None:
    fragment = client.get("/p/orbit/records?q=queue", headers={"hx-request": "true"}).text
    assert "<html" not in fragment and 'id="count"' in fragment


def test_stored_html_is_shown_as_text(client: TestClient, store: Store) -> None:
    for path in ("/p/orbit/records", f"/r/{store.script}", "/p/orbit/quality"):
        text = client.get(path).text
        assert "<script>window.pwned" not in text
        assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in text
    assert SCRIPT_TITLE not in client.get(f"/r/{store.script}").text


def test_a_record_page_draws_its_whole_history(client: TestClient, store: Store) -> None:
    text = client.get(f"/r/{store.postgres}").text
    assert "NOT CURRENT: replaced by" in text
    svg = text[text.index('<svg class="chain"') : text.index("</svg>")]
    nodes = re.findall(r'<a href="/r/([0-9a-f-]{36})" class="node node-(\w+)( node-focus)?"', svg)
    assert [(rid, status, bool(focus)) for rid, status, focus in nodes] == [
        (store.redis, "superseded", False),
        (store.postgres, "superseded", True),
        (store.nats, "active", False),
    ]
    assert svg.count('class="edge"') == 2
    # drawn the same from either end of the chain
    assert set(re.findall(r'data-id="([0-9a-f-]{36})"', client.get(f"/r/{store.redis}").text)) == {
        store.redis,
        store.postgres,
        store.nats,
    }
    alone = client.get(f"/r/{store.script}").text
    assert 'id="no-history"' in alone and "<svg" not in alone


def test_a_record_page_takes_an_id_prefix(client: TestClient, store: Store) -> None:
    assert client.get(f"/r/{store.nats[:13]}").status_code == 200


def test_the_sessions_page_puts_the_checkpoint_in_its_session(
    client: TestClient, store: Store
) -> None:
    text = client.get("/p/orbit/sessions").text
    session = text[text.index('<li class="session">') :]
    assert "claude" in session and "heartbeat done" in session
    assert f'<a href="/r/{store.checkpoint}">Worker heartbeat completed</a>' in session
    assert '<svg class="strip"' in text


def test_the_quality_page_lists_stale_records_and_issues_with_their_fix(
    client: TestClient, store: Store
) -> None:
    text = client.get("/p/orbit/quality?days=0").text
    assert "contextd verify D3" in text  # read-only: the command to run, by handle
    assert "missing tags" in text and "contextd update K1 --tag TAG" in text
    assert "Nothing unverified" in client.get("/p/orbit/quality?days=30").text


@pytest.mark.parametrize(
    ("path", "status", "sentence"),
    [
        ("/r/0123456789abcdef", 404, "No record with id"),
        ("/r/01", 400, "at least 8 characters"),
        ("/p/nowhere/records", 404, "No project 'nowhere'"),
        ("/p/orbit/records?kind=note", 400, "There is no kind 'note'"),
        ("/p/orbit/records?status=gone", 400, "There is no status 'gone'"),
        ("/p/orbit/records?page=0", 400, "The page must be a number"),
        ("/p/orbit/records?page=99999999999999999999", 400, "from 1 to 1000000"),
        ("/p/orbit/quality?days=99999999999999999999", 400, "from 0 to 36500"),
        ("/p/orbit/quality?days=-3", 400, "The days must be a whole number"),
        ("/p/orbit/records?q=" + "x" * 1001, 400, "over 1000 characters"),
        ("/no/such/page", 404, "There is no page at /no/such/page"),
    ],
)
def test_bad_input_is_one_sentence_with_its_status(
    client: TestClient, path: str, status: int, sentence: str
) -> None:
    response = client.get(path)
    assert response.status_code == status
    assert sentence in html.unescape(response.text)
    assert "Traceback" not in response.text


def test_an_internal_failure_is_one_sentence_and_the_server_goes_on(
    client: TestClient, store: Store, monkeypatch: pytest.MonkeyPatch, app: App
) -> None:
    def broken(self: RecordReader, reference: str) -> None:
        raise RuntimeError("a bug with a secret-looking detail")

    monkeypatch.setattr(RecordReader, "detail", broken)
    response = client.get(f"/r/{store.nats}")
    assert response.status_code == 500
    assert "contextd failed unexpectedly (RuntimeError)" in response.text
    assert "secret-looking" not in response.text and "Traceback" not in response.text
    assert client.get("/").status_code == 200


def test_a_long_list_comes_a_page_at_a_time(client: TestClient, store: Store, app: App) -> None:
    drafts = [
        RecordDraft(
            Kind.MEMORY,
            f"Note number {n} about shard {n * 7}",
            MemoryBody(),
            category="note",
            tags=("bulk",),
        )
        for n in range(60)
    ]
    app.writer.create_many(drafts, app.current_project(), force=True)
    first = client.get("/p/orbit/records").text
    assert "63 records, page 1 of 2." in first and "older →" in first
    assert len(_ids_in(first)) == 50
    second = client.get("/p/orbit/records?page=2").text
    assert len(_ids_in(second)) == 13 and "← newer" in second
    assert client.get("/p/orbit/records?page=9").text.count('class="rid"') == 13  # the last page
    tagged = client.get("/p/orbit/records?tag=bulk").text
    assert "60 records, page 1 of 2." in tagged and '<option value="bulk">60</option>' in tagged


def test_a_record_replacing_two_draws_both_in_the_first_column(
    client: TestClient, store: Store, app: App
) -> None:
    project = app.current_project()
    merged = app.writer.create(
        RecordDraft(
            Kind.MEMORY,
            "Queue and heartbeat notes merged into one runbook entry for workers",
            MemoryBody(),
            category="convention",
        ),
        project,
        supersedes=[store.script, store.checkpoint],
    )
    svg = client.get(f"/r/{merged.id}").text
    boxes = re.findall(r'data-id="([0-9a-f-]{36})">\s*<title>[^<]*</title>\s*<rect x="(\d+)"', svg)
    columns = {rid: int(x) for rid, x in boxes}
    assert columns[store.script] == columns[store.checkpoint] < columns[merged.id]
    assert svg.count('class="edge"') == 2


def test_search_counts_only_the_records_that_match(
    make_client: Callable[..., TestClient], app: App
) -> None:
    """The web view searches through the same ranking as the CLI: records that do not match
    the query are not listed to fill the page (it once said "16 hits" for one)."""
    ids = _store(app, [*_unrelated()[:40], MATCHING])
    page = make_client().get("/p/orbit/records", params={"q": "task queue"}).text
    assert _ids_in(page) == [ids[-1]]
    assert re.search(r"\b1 hit for", page)


def test_a_group_record_page_names_its_group(client: TestClient, app: App, store: Store) -> None:
    group = app.groups.create("Shop")
    app.groups.add(group.slug, [app.current_project()])
    draft = RecordDraft(
        Kind.MEMORY, "Every service logs JSON lines", MemoryBody(), category="note", group=""
    )
    held = app.writer.create(draft, app.current_project())
    page = client.get(f"/r/{held.id}")
    assert page.status_code == 200
    assert '<span class="badge" id="group">group shop</span>' in page.text
    assert 'id="group"' not in client.get(f"/r/{store.nats}").text


def test_a_change_to_config_holds_from_the_next_page_and_one_needing_a_restart_says_so(
    client: TestClient, app: App, home: Path
) -> None:
    """`ui` runs for days: `capture.review` set while it runs is what the Review page says
    next; a change to the store names the restart it needs, and the view goes on."""
    slug = app.current_project().slug
    assert "(it is <code>off</code> now)" in client.get(f"/p/{slug}/review").text
    config = home / "config.toml"
    before = config.read_text(encoding="utf-8")
    config.write_text(before + '[capture]\nreview = "agent"\n', encoding="utf-8")
    page = client.get(f"/p/{slug}/review").text
    assert "it is <code>off</code> now" not in page and "restart-note" not in page
    config.write_text(
        before + '[capture]\nreview = "agent"\n[store]\npool_size = 4\n', encoding="utf-8"
    )
    page = client.get(f"/p/{slug}/review").text
    assert "restart-note" in page and "[store]" in page and "restart this process" in page
    assert "it is <code>off</code> now" not in page  # the rest of the change holds
