"""The storage contract, held by both stores alike: every read and write path of the storage
modules gives the same answers on the SQLite file and on the team server."""

import json

import pytest

from contextd.app import App
from contextd.errors import ConflictError, DuplicateError, StoreError
from contextd.models import DecisionBody, Kind, MemoryBody, Reach, RecordDraft, Status
from contextd.storage import feedback, hook_state, id_prefixes, inventory, record_pages
from contextd.storage import records as rows
from contextd.storage import sync_state as sync_rows
from contextd.storage import vectors as vector_rows
from contextd.storage.agent_files import WrittenBlock, record_written, written_block
from contextd.storage.filters import RecordFilter
from contextd.storage.fts import fts_candidates


def _memory(title: str, **fields: object) -> RecordDraft:
    return RecordDraft(kind=Kind.MEMORY, title=title, body=MemoryBody(), category="note", **fields)  # type: ignore[arg-type]


def test_a_record_reads_back_field_for_field(app: App) -> None:
    project = app.current_project()
    draft = RecordDraft(
        kind=Kind.DECISION,
        title="Use NATS for the task queue",
        body=DecisionBody(
            problem="Redis pub/sub dropped tasks whenever workers reconnected during a deploy",
            why_chosen="NATS JetStream keeps durable consumers with acks and replay, so a "
            "worker that reconnects resumes where it stopped — ünïcode kept",
        ),
        tags=("queue", "infra"),
        retrieval_hints=("lost jobs after deploy", "message broker choice"),
    )
    stored = app.writer.create(draft, project)
    again = rows.get_record(app.db.connection(), stored.id)
    assert again == stored
    assert again is not None and again.tags == ("queue", "infra")


def test_filters_by_tag_kind_category_and_dates_select_the_same_records(app: App) -> None:
    project = app.current_project()
    first = app.writer.create(
        _memory("Deploys run from the release branch", tags=("ops",)), project
    )
    app.writer.create(_memory("The API speaks JSON over HTTP only", tags=("api",)), project)
    conn = app.db.connection()
    by_tag = rows.list_records(conn, RecordFilter(project.id, tags=("ops",)))
    assert [r.id for r in by_tag] == [first.id]
    by_kind = rows.list_records(conn, RecordFilter(project.id, kinds=(Kind.DECISION,)))
    assert by_kind == []
    since = rows.list_records(conn, RecordFilter(project.id, since=first.created_at))
    assert len(since) == 2
    assert rows.count_by_kind(conn, RecordFilter(project.id)) == {Kind.MEMORY: 2}
    page = record_pages.page_of_records(conn, RecordFilter(project.id), 1, 1)
    assert [r.id for r in page] == [first.id]  # newest first: the first is on page two
    assert record_pages.count_records(conn, RecordFilter(project.id)) == 2
    assert record_pages.tag_counts(conn, RecordFilter(project.id), 10) == [
        ("api", 1),
        ("ops", 1),
    ]


def test_same_title_in_the_same_scope_is_refused_as_a_duplicate(app: App) -> None:
    project = app.current_project()
    app.writer.create(_memory("Deploys run from the release branch"), project)
    with pytest.raises(DuplicateError):
        app.writer.create(_memory("DEPLOYS run from the release branch"), project)
    global_one = app.writer.create(
        RecordDraft(
            kind=Kind.MEMORY,
            title="Deploys run from the release branch",
            body=MemoryBody(),
            category="note",
            is_global=True,
        ),
        project,
        force=True,
    )
    assert rows.same_title(app.db.connection(), global_one) is None  # NULL scope matched


def test_supersede_delete_and_tombstones_behave_alike(app: App) -> None:
    project = app.current_project()
    old = app.writer.create(_memory("Queue on Redis lists for background jobs"), project)
    new = app.writer.create(
        _memory("Queue on NATS JetStream for background jobs"), project, force=True
    )
    linked = app.writer.create(
        _memory("Workers ack each job after it finished", related_to=(old.id,)), project
    )
    app.writer.supersede(old.id, new.id)
    conn = app.db.connection()
    assert rows.get_record(conn, linked.id).related_to == (new.id,)  # type: ignore[union-attr]
    assert rows.successors_of(conn, new.id) == [old.id]
    end = rows.chain_end(conn, old.id)
    assert end is not None and end.id == new.id
    assert rows.get_record(conn, old.id).status is Status.SUPERSEDED  # type: ignore[union-attr]
    with pytest.raises(ConflictError):
        app.writer.supersede(old.id, new.id)
    app.writer.delete(old.id)
    assert rows.tombstone_of(conn, old.id) is not None
    assert sync_rows.tombstone_count(conn) == 1
    app.writer.delete(new.id)  # a deletion drops the links to it
    assert rows.get_record(conn, linked.id).related_to == ()  # type: ignore[union-attr]


def test_full_text_finds_stems_across_title_body_tags_and_hints(app: App) -> None:
    project = app.current_project()
    hit = app.writer.create(
        _memory(
            "Connection pooling for the workers",
            tags=("databases",),
            retrieval_hints=("too many clients",),
        ),
        project,
    )
    app.writer.create(_memory("The web view renders pages on the server"), project)
    scope = RecordFilter(project.id)
    conn = app.db.connection()
    for text in ("pooled connections", "database", "clients", "WORKER"):
        found = fts_candidates(conn, text, scope, 10)
        assert [rid for rid, _ in found] == [hit.id], text
        assert found[0][1] > 0


def test_vectors_are_stored_counted_and_searched_in_scope(app: App) -> None:
    project = app.current_project()
    first = app.writer.create(_memory("Deploys run from the release branch"), project)
    second = app.writer.create(_memory("Tokens rotate every ninety days"), project)
    conn = app.db.connection()
    assert app.indexer is not None and app.vector_index is not None
    provider = app.indexer.provider
    hashes = vector_rows.stored_hashes(conn, provider.id, provider.dimensions)
    assert set(hashes) == {first.id, second.id}
    stats = vector_rows.vector_stats(conn, provider.id, provider.dimensions)
    assert (stats.records, stats.current, stats.other) == (2, 2, {})
    block = vector_rows.load_block(conn, provider.id, provider.dimensions)
    assert set(block.record_ids) == {first.id, second.id}
    assert len(block.data) == 2 * 4 * provider.dimensions
    query = provider.embed_query("release branch deploys")
    found = app.vector_index.search(query, Reach(project.id), 5)
    assert found[0][0] == first.id
    assert app.vector_index.similarity(query, [second.id]).keys() == {second.id}
    assert len(app.vector_index.vectors_of([first.id])[first.id]) == provider.dimensions
    assert vector_rows.missing_ids(conn, provider.id, provider.dimensions, project.id, 10) == []
    vector_rows.delete_embedding(conn, first.id)
    assert vector_rows.missing_ids(conn, provider.id, provider.dimensions, project.id, 10) == [
        first.id
    ]


def test_sessions_open_one_at_a_time_and_collect_their_records(app: App) -> None:
    project = app.current_project()
    first = app.sessions.start(project, "claude-code")
    second = app.sessions.start(project, "codex")
    assert app.sessions.get(first.id).ended_at is not None  # type: ignore[union-attr]
    assert app.sessions.open_for(project).id == second.id  # type: ignore[union-attr]
    made = app.writer.create(_memory("Deploys run from the release branch"), project)
    assert made.session_id == second.id
    report = app.sessions.report(app.sessions.end(second.id, "shipped it"))
    assert [r.id for r in report.records] == [made.id]
    assert [s.id for s in app.sessions.list_sessions(project)] == [second.id, first.id]
    short = app.sessions.short_ids([first.id])[first.id]
    assert app.sessions.resolve(short).id == first.id


def test_sync_rows_upsert_and_read_alike(app: App) -> None:
    project = app.current_project()
    record = app.writer.create(_memory("Deploys run from the release branch"), project)
    with app.db.transaction() as conn:
        sync_rows.upsert_tombstone(
            conn, sync_rows.Tombstone("gone", project.id, "2026-01-02T00:00:00.000Z")
        )
        sync_rows.upsert_tombstone(
            conn, sync_rows.Tombstone("gone", project.id, "2026-01-01T00:00:00.000Z")
        )
        sync_rows.add_versions(
            conn, [(record.id, record.updated_at), (record.id, record.updated_at)]
        )
        sync_rows.upsert_conflict(
            conn,
            sync_rows.ConflictRow(
                record.id, "peer", record.updated_at, "x", json.dumps({"a": 1}), "now"
            ),
        )
    conn = app.db.connection()
    assert sync_rows.tombstones_of(conn, ["gone", "other"]) == {"gone": "2026-01-02T00:00:00.000Z"}
    assert sync_rows.versions_of(conn, [record.id]) == {record.id: {record.updated_at}}
    assert [c.record_id for c in sync_rows.list_conflicts(conn)] == [record.id]
    assert sync_rows.forget_tombstones(conn, "2026-06-01") == 1
    assert len(sync_rows.store_id(conn)) >= 16


def test_hook_state_agent_files_prefixes_feedback_and_inventory(app: App) -> None:
    project = app.current_project()
    record = app.writer.create(_memory("Deploys run from the release branch"), project)
    with app.db.transaction() as conn:
        hook_state.add_shown(conn, "s1", [record.id], "prompt", "2026-01-02T00:00:00.000Z")
        hook_state.add_shown(conn, "s1", [record.id], "briefing", "2026-01-01T00:00:00.000Z")
        record_written(conn, WrittenBlock(project.id, "CLAUDE.md", "claude", "abc", "now"))
        feedback.add_feedback(conn, project.id, record.id, "how to deploy", "p", [0.5, 0.5], "now")
    conn = app.db.connection()
    assert hook_state.shown_ids(conn, "s1") == [record.id]
    assert hook_state.first_shown_at(conn, "s1") == "2026-01-01T00:00:00.000Z"
    assert written_block(conn, project.id, "CLAUDE.md").sha256 == "abc"  # type: ignore[union-attr]
    assert feedback.feedback_vectors(conn, project.id, "p") == [(record.id, [0.5, 0.5])]
    assert id_prefixes.ids_with_prefix(conn, "records", record.id[:6]) == [record.id]
    counts = inventory.kind_status_counts(conn)
    assert counts[project.id] == {("memory", "active"): 1}


def test_a_failed_transaction_leaves_nothing_and_nested_ones_roll_back_alone(app: App) -> None:
    project = app.current_project()
    with pytest.raises(RuntimeError), app.db.transaction():
        app.writer.create(_memory("Deploys run from the release branch"), project)
        raise RuntimeError("abort")
    assert app.reader.list_records(project) == []
    with app.db.transaction():
        kept = app.writer.create(_memory("Tokens rotate every ninety days"), project)
        with pytest.raises(RuntimeError), app.db.transaction():
            app.writer.create(_memory("Deploys run from the release branch"), project)
            raise RuntimeError("inner")
    assert [r.id for r in app.reader.list_records(project)] == [kept.id]
    with app.db.snapshot() as conn:
        assert rows.get_record(conn, kept.id) is not None


def test_the_change_token_moves_with_each_commit(app: App) -> None:
    before = app.db.change_token()
    assert app.db.change_token() == before  # reading changes nothing
    app.writer.create(_memory("Deploys run from the release branch"), app.current_project())
    assert app.db.change_token() != before


def test_a_read_only_store_refuses_writes_in_one_sentence(app: App, backend: str) -> None:
    from contextd.app import open_app

    with open_app(app.settings, read_only=True) as opened:
        assert opened.db.read_only
        assert len(opened.reader.list_records(app.current_project())) == 0
        with pytest.raises(StoreError) as refused:
            opened.writer.create(
                _memory("Deploys run from the release branch"), app.current_project()
            )
    assert "\n" not in str(refused.value)


def test_a_group_is_renamed_and_deleted_with_its_records(app: App) -> None:
    project = app.current_project()
    group = app.groups.create("Shop")
    app.groups.add(group.slug, [project])
    held = app.writer.create(_memory("Every service logs JSON lines to stdout", group=""), project)
    renamed = app.groups.rename("shop", "Storefront")
    assert (renamed.slug, renamed.name, renamed.members) == (
        "storefront",
        "Storefront",
        (project.id,),
    )
    with pytest.raises(ConflictError):
        app.groups.rename("storefront", project.slug)
    gone = app.groups.delete("storefront", purge=True)
    assert gone.records_deleted == 1 and app.groups.of(project) is None
    assert rows.get_record(app.db.connection(), held.id) is None
