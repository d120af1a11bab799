"""Changes through the view with --write: the core writer's rules hold (validation, secrets,
duplicates, lifecycle), and a refusal is the page again with one sentence."""

import html

from httpx import Response
from starlette.testclient import TestClient

from contextd.app import App
from contextd.models import Kind, Status
from tests.web.conftest import BASE, Store

GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _post(writer: TestClient, path: str, **fields: str) -> Response:
    data = {"csrf": writer.access.csrf} | fields  # type: ignore[attr-defined]
    return writer.post(path, data=data, headers={"origin": BASE})


def test_verify_stamps_the_record_and_lands_on_its_page(
    writer: TestClient, store: Store, app: App
) -> None:
    before = app.reader.get(store.nats).verified_at
    response = _post(writer, f"/r/{store.nats}/verify")
    assert response.status_code == 303
    assert response.headers["location"] == f"/r/{store.nats}?done=verified"
    assert app.reader.get(store.nats).verified_at > before
    assert "Verified: the record is stamped" in writer.get(response.headers["location"]).text


def test_htmx_gets_the_new_state_as_a_fragment(writer: TestClient, store: Store) -> None:
    response = writer.post(
        f"/r/{store.nats}/verify",
        data={"csrf": writer.access.csrf},  # type: ignore[attr-defined]
        headers={"origin": BASE, "hx-request": "true"},
    )
    assert response.status_code == 200
    assert response.text.startswith('<span class="done">Verified')


def test_archive_keeps_its_reason_and_unarchive_brings_it_back(
    writer: TestClient, store: Store, app: App
) -> None:
    _post(writer, f"/r/{store.script}/archive", reason="the templates escape everything now")
    archived = app.reader.get(store.script)
    assert archived.status is Status.ARCHIVED
    assert archived.archived_reason == "the templates escape everything now"
    again = _post(writer, f"/r/{store.script}/archive")
    assert again.status_code == 409
    assert "is already archived" in html.unescape(again.text)
    _post(writer, f"/r/{store.script}/unarchive")
    assert app.reader.get(store.script).status is Status.ACTIVE


def test_supersede_follows_the_core_rules(writer: TestClient, store: Store, app: App) -> None:
    assert _post(writer, f"/r/{store.script}/supersede", by=store.nats).status_code == 303
    assert app.reader.get(store.script).superseded_by == store.nats
    twice = _post(writer, f"/r/{store.script}/supersede", by=store.nats)
    assert twice.status_code == 409
    assert "already superseded" in html.unescape(twice.text)
    by_old = _post(writer, f"/r/{store.nats}/supersede", by=store.redis)
    assert by_old.status_code == 409
    assert "only an active record can replace another" in by_old.text
    unknown = _post(writer, f"/r/{store.nats}/supersede", by="ffffffffffff")
    assert unknown.status_code == 404


def test_edit_changes_only_what_changed(writer: TestClient, store: Store, app: App) -> None:
    form = writer.get(f"/r/{store.nats}/edit").text
    assert 'name="why_chosen"' in form and 'name="category"' not in form
    response = _post(
        writer,
        f"/r/{store.nats}/edit",
        title="Use NATS JetStream for the task queue",
        tags="queue, nats",
        problem="Polling the Postgres queue added load and latency to the primary database at peak",
        why_chosen="JetStream keeps durable consumers with acks and replay, so a reconnecting "
        "worker resumes where it stopped",
        priority="4",
    )
    assert response.status_code == 303
    edited = app.reader.get(store.nats)
    assert edited.tags == ("queue", "nats") and edited.priority == 4
    assert edited.title == "Use NATS JetStream for the task queue"


def test_an_edit_breaking_a_rule_is_shown_again_with_the_reason(
    writer: TestClient, store: Store, app: App
) -> None:
    response = _post(writer, f"/r/{store.nats}/edit", why_chosen="It is fast.")
    assert response.status_code == 400
    text = html.unescape(response.text)
    assert 'id="refused"' in text and "why" in text.lower()
    assert "It is fast." in text  # the entered text is kept for correcting
    assert app.reader.get(store.nats).body.why_chosen.startswith("JetStream")  # type: ignore[union-attr]


def test_an_edit_holding_a_secret_is_refused_and_the_secret_not_sent_back(
    writer: TestClient, store: Store, app: App
) -> None:
    response = _post(
        writer, f"/r/{store.script}/edit", title=f"deploy with token {GITHUB_TOKEN} from CI"
    )
    assert response.status_code == 400
    assert GITHUB_TOKEN not in response.text
    assert "never stores secrets" in html.unescape(response.text)
    assert "Emptied because it held a secret: title" in response.text
    assert GITHUB_TOKEN not in app.reader.get(store.script).title


def test_an_edit_restating_another_record_is_refused_as_a_duplicate(
    writer: TestClient, store: Store, app: App
) -> None:
    same_kind = _post(writer, f"/r/{store.nats}/edit", title="Use Redis pub/sub for the task queue")
    assert same_kind.status_code == 409
    assert store.redis in same_kind.text
    assert app.reader.get(store.nats).title == "Use NATS JetStream for the task queue"


def test_an_edit_changing_nothing_says_so(writer: TestClient, store: Store) -> None:
    response = _post(writer, f"/r/{store.nats}/edit", title="Use NATS JetStream for the task queue")
    assert response.status_code == 400
    assert "Nothing to change" in response.text


def test_a_bad_priority_is_one_sentence(writer: TestClient, store: Store) -> None:
    response = _post(writer, f"/r/{store.nats}/edit", priority="9")
    assert response.status_code == 400
    assert "priority must be a whole number from 1 to 5" in response.text


def test_changes_to_a_missing_record_are_not_found(writer: TestClient) -> None:
    for action in ("verify", "archive", "unarchive", "edit"):
        response = _post(writer, f"/r/ffffffffffff/{action}")
        assert response.status_code == 404, action
        assert "No record with id" in html.unescape(response.text)


def _held(app: App, title: str) -> str:
    """A draft an agent wrote under `[capture] review = "agent"`, waiting."""
    from contextd.core.writing.writer import RecordWriter
    from contextd.models import MemoryBody, RecordDraft

    held = RecordWriter(app.db, app.reader, review="agent")
    draft = RecordDraft(Kind.MEMORY, title, MemoryBody(), category="gotcha", asked_by="agent")
    stored = held.record(draft, app.current_project())
    assert stored.held
    return stored.record.id


def test_the_review_page_approves_and_rejects_what_agents_wrote(
    writer: TestClient, client: TestClient, app: App
) -> None:
    keep = _held(app, "The GPU workers need the CUDA 12 driver, not 11")
    drop = _held(app, "<script>alert(1)</script> Workers restart every hour")
    slug = app.current_project().slug

    page = client.get(f"/p/{slug}/review")
    assert page.status_code == 200
    assert "CUDA 12 driver" in page.text and f"contextd review approve {keep}" in page.text
    assert "<script>alert(1)</script>" not in page.text  # a draft is escaped like a record
    assert client.post(
        f"/p/{slug}/review/{keep}/approve", headers={"origin": BASE}
    ).status_code in (
        403,
        404,
        405,
    )  # read-only: no such route

    approved = _post(writer, f"/p/{slug}/review/{keep}/approve")
    assert approved.status_code == 303
    assert "Approved: the draft is memory now." in writer.get(approved.headers["location"]).text
    assert [r.title for r in app.reader.list_records(app.current_project())].count(
        "The GPU workers need the CUDA 12 driver, not 11"
    ) == 1
    rejected = _post(writer, f"/p/{slug}/review/{drop}/reject", reason="not true")
    assert rejected.status_code == 303
    assert app.review.waiting(app.current_project()) == []
    again = _post(writer, f"/p/{slug}/review/{drop}/approve")
    assert again.status_code == 404 and "No waiting draft has the id" in html.unescape(again.text)
    forged = writer.post(
        f"/p/{slug}/review/{keep}/approve", data={"csrf": "x"}, headers={"origin": BASE}
    )
    assert forged.status_code == 403
