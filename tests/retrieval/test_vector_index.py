"""The in-memory matrix follows SQLite: after adds, replacements, deletions and a model
change, a long-lived index answers exactly as a freshly loaded one."""

import numpy as np
import pytest

from contextd.app import App
from contextd.clock import now
from contextd.models import Kind, MemoryBody, Project, Reach, RecordDraft, RecordEdit
from contextd.retrieval.vector_index import SqliteVectorIndex
from contextd.storage import vectors as rows

TOPICS = (
    "The billing service rounds invoices to two decimals before storing them",
    "Deploys go out through the blue green pipeline on weekday mornings",
    "Redis was replaced by PostgreSQL for the job queue after lost jobs",
    "The auth middleware validates session cookies against the token table",
    "Schema migrations run in one transaction each, numbered by file name",
    "Webhooks retry with exponential backoff for up to one day",
)


def _store(app: App, title: str, project: Project | None) -> str:
    draft = RecordDraft(Kind.MEMORY, title, MemoryBody(), category="note", is_global=not project)
    return app.writer.create(draft, project, force=True).id


def _agree(app: App, kept: SqliteVectorIndex, project: Project) -> None:
    assert app.indexer is not None
    fresh = SqliteVectorIndex(app.db, app.indexer.provider.id, app.indexer.provider.dimensions)
    for text in ("job queue database", "invoice rounding", "session cookie checks"):
        query = app.indexer.provider.embed_query(text)
        for scope in (project.id, None):
            assert kept.search(query, Reach(scope), 20) == fresh.search(query, Reach(scope), 20)
        ids = [rid for rid, _ in fresh.search(query, Reach(project.id), 20)]
        assert kept.similarity(query, ids) == fresh.similarity(query, ids)
        assert kept.vectors_of(ids) == fresh.vectors_of(ids)
    for scope in (project.id, None):
        _same_centre(kept, fresh, Reach(scope))


def _same_centre(kept: SqliteVectorIndex, fresh: SqliteVectorIndex, reach: Reach) -> None:
    """Both lean the same way, and that way is the mean of the reach's vectors."""
    ours, theirs = kept.centre(reach), fresh.centre(reach)
    if theirs is None:  # no vector in reach (no global record yet)
        assert ours is None
        return
    assert ours is not None and ours.count == theirs.count
    assert ours.direction == pytest.approx(theirs.direction, abs=1e-6)
    assert ours.lean == pytest.approx(theirs.lean, abs=1e-6)
    ids = [rid for rid, _ in fresh.search([0.0] * len(ours.direction), reach, 10_000)]
    mean = np.mean(list(fresh.vectors_of(ids).values()), axis=0)
    assert ours.lean == pytest.approx(float(np.linalg.norm(mean)), abs=1e-6)
    assert ours.direction == pytest.approx(list(mean / np.linalg.norm(mean)), abs=1e-6)


def test_an_index_kept_open_sees_every_change_as_a_fresh_one_does(app: App) -> None:
    assert app.indexer is not None
    provider = app.indexer.provider
    kept = SqliteVectorIndex(app.db, provider.id, provider.dimensions)
    project = app.current_project()
    other = app.projects.ensure("elsewhere")
    ids = [_store(app, title, project) for title in TOPICS[:3]]
    _agree(app, kept, project)

    _store(app, TOPICS[3], None)  # a global one
    elsewhere = _store(app, TOPICS[4], other)
    _agree(app, kept, project)
    query = provider.embed_query(TOPICS[4])
    assert elsewhere not in dict(kept.search(query, Reach(project.id), 20))
    assert elsewhere in dict(kept.search(query, Reach(other.id), 20))

    app.writer.update(ids[0], RecordEdit(title="Invoices are rounded half up to whole cents"))
    _agree(app, kept, project)  # replaced in place

    app.writer.delete(ids[1])
    _agree(app, kept, project)  # removed: a full reload
    assert ids[1] not in dict(kept.search(provider.embed_query(TOPICS[1]), Reach(project.id), 20))

    _store(app, TOPICS[5], project)
    with app.db.transaction() as conn:  # one vector replaced by another model's
        rows.upsert_embeddings(conn, [rows.EmbeddingRow(ids[2], "other:model", "h", [1.0])], now())
    _agree(app, kept, project)
    assert ids[2] not in kept.vectors_of([ids[2]])


def test_many_appends_grow_the_matrix_and_keep_every_vector(app: App) -> None:
    assert app.indexer is not None
    provider = app.indexer.provider
    kept = SqliteVectorIndex(app.db, provider.id, provider.dimensions)
    project = app.current_project()
    stored = []
    for i in range(70):  # past the first capacity of 64 rows
        stored.append(_store(app, f"Note number {i} about the {TOPICS[i % 6].lower()}", project))
        if i % 10 == 0:
            kept.vectors_of([])
    assert set(kept.vectors_of(stored)) == set(stored)
    _agree(app, kept, project)
    assert kept.rebuild() == 70


def test_a_reach_without_vectors_has_no_centre(app: App) -> None:
    assert app.indexer is not None
    provider = app.indexer.provider
    index = SqliteVectorIndex(app.db, provider.id, provider.dimensions)
    assert index.centre(Reach(app.current_project().id)) is None


def test_a_vector_replaced_right_after_the_first_load_is_seen(app: App) -> None:
    # The first load serves SQLite's buffer as it is; the first in-place change must copy it.
    assert app.indexer is not None
    provider = app.indexer.provider
    project = app.current_project()
    ids = [_store(app, title, project) for title in TOPICS[:2]]
    kept = SqliteVectorIndex(app.db, provider.id, provider.dimensions)
    before = kept.vectors_of(ids)
    app.writer.update(ids[0], RecordEdit(title="Invoices are rounded half up to whole cents"))
    after = kept.vectors_of(ids)
    assert after[ids[0]] != before[ids[0]]
    assert after[ids[1]] == before[ids[1]]
    _agree(app, kept, project)


def test_a_resident_index_takes_new_records_without_copying_its_matrix(app: App) -> None:
    """A daemon or MCP server loads with room to grow: new records fill that room, where
    growing by a copy at the first one held two matrices at once, at its busiest. A full
    reload (after a removal) makes room again."""
    assert app.indexer is not None
    provider = app.indexer.provider
    project = app.current_project()
    ids = [_store(app, title, project) for title in TOPICS[:3]]
    kept = SqliteVectorIndex(app.db, provider.id, provider.dimensions)
    kept.load(resident=True)
    buffer = kept._current()._vectors
    for i in range(20):
        _store(app, f"Note number {i} about the {TOPICS[i % 6].lower()}", project)
        kept.vectors_of([])
        assert kept._current()._vectors is buffer
    _agree(app, kept, project)
    app.writer.delete(ids[0])
    kept.vectors_of([])
    room = kept._current()
    _store(app, TOPICS[4], project)
    kept.vectors_of([])
    assert kept._current()._vectors is room._vectors
    _agree(app, kept, project)


def test_a_groups_vectors_are_in_reach_of_its_members_only(app: App) -> None:
    assert app.indexer is not None
    provider = app.indexer.provider
    index = SqliteVectorIndex(app.db, provider.id, provider.dimensions)
    member, outsider = app.current_project(), app.projects.ensure("outsider")
    group = app.groups.create("Shop")
    app.groups.add(group.slug, [member])
    draft = RecordDraft(Kind.MEMORY, TOPICS[2], MemoryBody(), category="note", group="")
    shared = app.writer.create(draft, member).id
    query = provider.embed_query(TOPICS[2])
    assert shared in dict(index.search(query, Reach(member.id, group.id), 20))
    assert shared not in dict(index.search(query, Reach(member.id), 20))
    assert shared not in dict(index.search(query, Reach(outsider.id), 20))
    assert shared in dict(index.search(query, Reach(group.id), 20))  # the group's own reach
