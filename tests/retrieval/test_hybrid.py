"""Hybrid retrieval through the core API: real SQLite, FTS5 and hashing vectors."""

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from contextd.app import App, open_app
from contextd.config import load_settings
from contextd.errors import InvalidInputError
from contextd.models import (
    DecisionBody,
    Kind,
    MemoryBody,
    Project,
    Record,
    RecordDraft,
    SearchQuery,
    Status,
)

FILLER = (
    "The docs site is built with mkdocs material and published on every tag",
    "Invoices are rounded to two decimals before they are stored in billing",
    "Onboarding emails are sent by a cron job at nine in the morning",
)


def _memory(
    app: App,
    title: str,
    *,
    project: Project | None = None,
    category: str = "note",
    **fields: object,
) -> Record:
    draft = RecordDraft(
        kind=Kind.MEMORY,
        title=title,
        body=MemoryBody(),
        category=category,
        **fields,  # type: ignore[arg-type]
    )
    is_global = bool(fields.get("is_global"))
    where = None if is_global else (project or app.current_project())
    return app.writer.create(draft, where, force=True)  # near-twins on purpose


def _ids(app: App, text: str, **options: object) -> list[str]:
    query = SearchQuery(text=text, **options)  # type: ignore[arg-type]
    return [h.record.id for h in app.search.search(app.current_project(), query).hits]


def _filler(app: App) -> None:
    for title in FILLER:
        _memory(app, title)


def _embedding_rows(app: App, record_id: str) -> int:
    with closing(sqlite3.connect(app.settings.db_path)) as conn:
        row = conn.execute(
            "SELECT count(*) FROM embeddings WHERE record_id = ?", (record_id,)
        ).fetchone()
    return int(row[0])


def test_a_record_is_found_through_its_retrieval_hint_alone(app: App) -> None:
    _filler(app)
    hinted = _memory(
        app,
        "Workers must be idempotent",
        retrieval_hints=("duplicate task delivery after reconnect",),
    )
    plain = _memory(app, "Workers must log their start time")
    found = _ids(app, "duplicate delivery")
    assert found[0] == hinted.id
    assert plain.id not in found


def test_a_superseded_record_never_appears_in_default_results(app: App) -> None:
    _filler(app)
    old = _memory(app, "Deploys run on Jenkins nightly builds from the build server")
    new = _memory(app, "Deploys run through GitHub Actions workflows on every merge")
    app.writer.supersede(old.id, new.id)
    for text in ("Jenkins nightly builds", "deploys", "GitHub Actions workflows"):
        assert old.id not in _ids(app, text)


def test_a_query_worded_like_the_old_record_returns_its_replacement_first(app: App) -> None:
    _filler(app)
    old = _memory(app, "Deploys run on Jenkins nightly builds from the build server")
    new = _memory(app, "Releases ship through GitHub Actions workflows on every merge")
    app.writer.supersede(old.id, new.id)
    hits = app.search.search(
        app.current_project(), SearchQuery(text="Jenkins nightly builds server")
    ).hits
    assert hits[0].record.id == new.id
    assert hits[0].record.status is Status.ACTIVE
    assert hits[0].via == old.id
    assert old.id not in [h.record.id for h in hits]


def test_with_include_superseded_both_appear_and_the_old_one_ranks_below(app: App) -> None:
    _filler(app)
    old = _memory(app, "Deploys run on Jenkins nightly builds from the build server")
    new = _memory(app, "Releases ship through GitHub Actions workflows on every merge")
    app.writer.supersede(old.id, new.id)
    hits = app.search.search(
        app.current_project(),
        SearchQuery(text="Jenkins nightly builds server", include_superseded=True),
    ).hits
    found = [h.record.id for h in hits]
    assert new.id in found and old.id in found
    assert found.index(new.id) < found.index(old.id)
    old_hit = hits[found.index(old.id)]
    assert old_hit.record.status is Status.SUPERSEDED
    assert old_hit.record.superseded_by == new.id


def test_a_chain_of_supersedes_hands_the_match_to_its_current_end(app: App) -> None:
    _filler(app)
    first = _memory(app, "Deploys run on Jenkins nightly builds from the build server")
    second = _memory(app, "Deploys run on Buildkite agents hosted in the office")
    third = _memory(app, "Releases ship through GitHub Actions workflows on every merge")
    app.writer.supersede(first.id, second.id)
    app.writer.supersede(second.id, third.id)
    found = _ids(app, "Jenkins nightly builds server")
    assert found[0] == third.id
    assert first.id not in found and second.id not in found


def test_another_projects_records_never_appear_even_with_identical_text(app: App) -> None:
    text = "The task queue retries a job three times before dead-lettering it"
    mine = _memory(app, text)
    other = app.projects.ensure("other")
    theirs = [
        _memory(app, text, project=other),
        _memory(app, text + " quickly", project=other),
        _memory(app, "Dead-lettering: the task queue retries a job three times", project=other),
    ]
    for query in (text, "task queue retries", "dead-lettering"):
        found = _ids(app, query, include_superseded=True, include_archived=True)
        assert mine.id in found
        assert not {r.id for r in theirs} & set(found)


def test_global_records_appear_beside_the_projects_own(app: App) -> None:
    _filler(app)
    mine = _memory(app, "The task queue retries a job three times")
    shared = _memory(app, "Queue names use kebab-case everywhere", is_global=True)
    assert shared.project_id is None
    found = _ids(app, "queue")
    assert {mine.id, shared.id} <= set(found)


def test_global_records_are_found_from_any_project(app: App) -> None:
    shared = _memory(app, "Queue names use kebab-case everywhere", is_global=True)
    other = app.projects.ensure("other")
    hits = app.search.search(other, SearchQuery(text="queue names")).hits
    assert [h.record.id for h in hits] == [shared.id]


def test_the_kind_filter_keeps_only_that_kind(app: App) -> None:
    memory = _memory(app, "The task queue runs on three nodes")
    decision = app.writer.create(
        RecordDraft(
            kind=Kind.DECISION,
            title="Use NATS for the task queue",
            body=DecisionBody(
                problem="Redis pub/sub dropped tasks whenever workers reconnected during a deploy",
                why_chosen="NATS JetStream keeps durable consumers with acks and replay, so a "
                "worker that reconnects resumes where it stopped",
            ),
        ),
        app.current_project(),
    )
    assert _ids(app, "task queue", kinds=(Kind.MEMORY,)) == [memory.id]
    assert _ids(app, "task queue", kinds=(Kind.DECISION,)) == [decision.id]
    assert set(_ids(app, "task queue")) == {memory.id, decision.id}


def test_the_tag_filter_keeps_only_records_with_every_tag(app: App) -> None:
    both = _memory(app, "The task queue runs on three nodes", tags=("queue", "ops"))
    one = _memory(app, "The task queue retries three times", tags=("queue",))
    _memory(app, "The task queue is monitored by grafana")
    assert set(_ids(app, "task queue", tags=("queue",))) == {both.id, one.id}
    assert _ids(app, "task queue", tags=("queue", "ops")) == [both.id]
    assert _ids(app, "task queue", tags=("missing",)) == []


def test_the_category_filter_keeps_only_that_category(app: App) -> None:
    gotcha = _memory(app, "The task queue drops jobs on restart", category="gotcha")
    _memory(app, "The task queue runs on three nodes", category="architecture")
    assert _ids(app, "task queue", category="gotcha") == [gotcha.id]


def test_since_and_before_filter_on_the_creation_date(app: App) -> None:
    old = _memory(app, "The task queue ran on RabbitMQ", created_at="2020-03-01T00:00:00Z")
    new = _memory(app, "The task queue runs on NATS", created_at="2026-01-10T00:00:00Z")
    cut = "2024-01-01T00:00:00.000Z"
    assert _ids(app, "task queue", since=cut) == [new.id]
    assert _ids(app, "task queue", before=cut) == [old.id]
    assert _ids(app, "task queue", since=new.created_at) == [new.id]
    assert _ids(app, "task queue", before=new.created_at) == [old.id]


def test_since_and_before_can_count_from_the_last_verified_time(app: App) -> None:
    old = _memory(app, "The task queue ran on RabbitMQ", created_at="2020-03-01T00:00:00Z")
    new = _memory(app, "The task queue runs on NATS", created_at="2026-01-10T00:00:00Z")
    rechecked = app.writer.verify(old.id)
    cut = "2024-01-01T00:00:00.000Z"
    assert _ids(app, "task queue", since=cut) == [new.id]
    assert set(_ids(app, "task queue", since=cut, dates_by="verified")) == {old.id, new.id}
    assert _ids(app, "task queue", since=rechecked.verified_at, dates_by="verified") == [old.id]
    assert _ids(app, "task queue", before=cut, dates_by="verified") == []


def test_dates_counted_from_an_unknown_time_are_one_clear_error(app: App) -> None:
    with pytest.raises(InvalidInputError, match="created, verified"):
        _ids(app, "task queue", since="2024-01-01T00:00:00.000Z", dates_by="updated")


def test_related_expansion_adds_a_linked_record_after_the_ranked_hits(app: App) -> None:
    _filler(app)
    runbook = _memory(app, "Restart the broker with systemctl restart nats on the host")
    parent = _memory(
        app, "The task queue drops jobs when the broker restarts", related_to=(runbook.id,)
    )
    hits = app.search.search(app.current_project(), SearchQuery(text="task queue jobs")).hits
    found = [h.record.id for h in hits]
    assert found.count(runbook.id) == 1
    linked = hits[found.index(runbook.id)]
    assert linked.linked_from == parent.id
    ranked = [h for h in hits if h.linked_from is None]
    assert list(hits[: len(ranked)]) == ranked
    assert parent.id in found


def test_related_expansion_is_off_when_not_asked_for(app: App) -> None:
    runbook = _memory(app, "Restart the broker with systemctl restart nats on the host")
    _memory(app, "The task queue drops jobs when the broker restarts", related_to=(runbook.id,))
    assert runbook.id not in _ids(app, "task queue jobs", expand_related=False)


def test_related_expansion_never_repeats_a_record_already_shown(app: App) -> None:
    sibling = _memory(app, "The task queue keeps jobs for seven days")
    parent = _memory(app, "The task queue drops jobs on restart", related_to=(sibling.id,))
    hits = app.search.search(app.current_project(), SearchQuery(text="task queue jobs")).hits
    found = [h.record.id for h in hits]
    assert sorted(found) == sorted([sibling.id, parent.id])
    assert all(h.linked_from is None for h in hits)


def test_related_expansion_never_brings_in_another_projects_record(app: App) -> None:
    other = app.projects.ensure("other")
    theirs = _memory(app, "Their broker restarts every night at midnight", project=other)
    _memory(app, "The task queue drops jobs on restart", related_to=(theirs.id,))
    found = _ids(app, "task queue jobs")
    assert theirs.id not in found
    assert len(found) == 1


def test_related_expansion_leaves_out_a_linked_superseded_record(app: App) -> None:
    old = _memory(app, "Restart the broker with the old init script")
    new = _memory(app, "Restart the broker with systemctl restart nats")
    app.writer.supersede(old.id, new.id)
    _memory(app, "The task queue drops jobs on restart of it", related_to=(old.id,))
    assert old.id not in _ids(app, "task queue jobs")


def test_a_record_stored_without_a_vector_is_embedded_at_query_time(app: App) -> None:
    _filler(app)
    record = _memory(app, "The task queue retries a job three times")
    assert _embedding_rows(app, record.id) == 1
    with closing(sqlite3.connect(app.settings.db_path)) as conn, conn:
        conn.execute("DELETE FROM embeddings WHERE record_id = ?", (record.id,))
    assert _embedding_rows(app, record.id) == 0
    found = _ids(app, "task queue retries")
    assert _embedding_rows(app, record.id) == 1
    assert found[0] == record.id


def test_a_record_without_a_vector_is_still_matched_by_meaning_after_catch_up(app: App) -> None:
    record = _memory(app, "Kubernetes pods restart when liveness probes fail")
    with closing(sqlite3.connect(app.settings.db_path)) as conn, conn:
        conn.execute("DELETE FROM embeddings WHERE record_id = ?", (record.id,))
    hits = app.search.search(
        app.current_project(), SearchQuery(text="kubernetes liveness probes")
    ).hits
    assert hits[0].record.id == record.id
    assert hits[0].terms.semantic > 0


def test_diversify_returns_the_limit_without_duplicates(app: App) -> None:
    for n in range(4):
        _memory(app, f"The task queue retries a job three times (copy {n})")
    _memory(app, "The task queue is monitored with grafana dashboards")
    _memory(app, "The task queue runs on three NATS nodes")
    hits = app.search.search(
        app.current_project(),
        SearchQuery(text="task queue", limit=3, diversify=True, expand_related=False),
    ).hits
    found = [h.record.id for h in hits]
    assert len(found) == 3
    assert len(set(found)) == 3


def test_diversify_prefers_a_different_record_over_a_near_duplicate(app: App) -> None:
    first = _memory(app, "Task queue workers retry failed jobs three times")
    twin = _memory(app, "Task queue workers retry failed jobs three times.")
    other = _memory(app, "Task queue dashboards and alerts live in grafana")
    plain = _ids(app, "task queue", limit=2, expand_related=False)
    diverse = _ids(app, "task queue", limit=2, diversify=True, expand_related=False)
    assert set(plain) == {first.id, twin.id}
    assert diverse[0] in (first.id, twin.id)
    assert diverse[1] == other.id


def test_a_zero_superseded_penalty_still_hands_the_match_to_the_replacement(
    home: Path, repo: Path
) -> None:
    """search.superseded_penalty = 0 is an accepted setting ("never show old facts")."""
    (home / "config.toml").write_text(
        '[embeddings]\nprovider = "hashing"\n[search]\nsuperseded_penalty = 0.0\n',
        encoding="utf-8",
    )
    with open_app(load_settings(cwd=repo)) as opened:
        old = _memory(opened, "Deploys run on Jenkins nightly builds from the build server")
        new = _memory(opened, "Releases ship through GitHub Actions workflows on every merge")
        opened.writer.supersede(old.id, new.id)
        hits = opened.search.search(
            opened.current_project(), SearchQuery(text="Jenkins nightly builds server")
        ).hits
    assert [h.record.id for h in hits] == [new.id]


def test_a_failing_full_text_arm_waits_for_the_vector_arm_before_it_fails(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vector arm runs on another thread while the full-text arm does. If the full-text
    arm fails, the store may be closed next, so the vector arm must already be done: closing
    a connection another thread is reading through crashes the process."""
    import time

    from contextd.errors import StoreError
    from contextd.retrieval import search as search_module

    _memory(app, "Deploys wait for the nightly backup to finish")
    assert app.indexer is not None
    provider = app.indexer.provider
    embed = provider.embed_query
    finished: list[bool] = []

    def slow_embed(text: str) -> list[float]:
        time.sleep(0.3)
        vector = embed(text)
        finished.append(True)
        return vector

    def failing(*_args: object, **_kwargs: object) -> object:
        raise StoreError("The store could not be read: disk I/O error.")

    monkeypatch.setattr(provider, "embed_query", slow_embed)
    monkeypatch.setattr(search_module, "lexical_matches", failing)
    with pytest.raises(StoreError):
        app.search.search(app.current_project(), SearchQuery(text="nightly backup"))
    assert finished == [True]


def test_the_first_search_reads_the_index_beside_the_model_and_waits_for_it(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first search reads the vector index on a thread of its own while the model loads.
    When the model then fails, the answer is full-text only, and the read is over before the
    search returns: the caller may close the store next."""
    import threading
    import time

    from contextd.errors import ProviderUnavailableError

    record = _memory(app, "Deploys wait for the nightly backup to finish")
    assert app.indexer is not None and app.vector_index is not None
    index = app.vector_index
    load = index.load
    readers: list[str] = []

    def slow_load() -> None:
        time.sleep(0.3)
        load()
        readers.append(threading.current_thread().name)

    def failing(text: str) -> list[float]:
        raise ProviderUnavailableError("The local model failed to run: out of memory.")

    monkeypatch.setattr(index, "load", slow_load)
    monkeypatch.setattr(app.indexer.provider, "embed_query", failing)
    result = app.search.search(app.current_project(), SearchQuery(text="nightly backup"))
    assert [h.record.id for h in result.hits] == [record.id]
    assert result.degraded is not None and "full-text only" in result.degraded
    assert len(readers) == 1 and readers[0] != threading.current_thread().name
    app.search.search(app.current_project(), SearchQuery(text="nightly backup"))
    assert len(readers) == 1  # read once: later searches find it in memory
