"""RecordWriter.write_all: prepared changes are stored together, or not at all."""

import pytest

from contextd.app import App
from contextd.errors import ConflictError
from contextd.models import Kind, MemoryBody, Origin, RecordDraft, RecordEdit, Status


def _draft(title: str) -> RecordDraft:
    return RecordDraft(
        kind=Kind.MEMORY, title=title, body=MemoryBody(), category="gotcha", origin=Origin.USER
    )


def test_a_record_changed_after_it_was_prepared_rolls_the_whole_batch_back(app: App) -> None:
    project = app.current_project()
    kept = app.writer.create(_draft("Builds need Node 20 or newer on every runner"), project)
    batch = [
        app.writer.prepare_create(_draft("Deploys run from the release branch only"), project),
        app.writer.prepare_archive(kept.id),
    ]
    app.writer.update(kept.id, RecordEdit(priority=1))  # someone else, meanwhile
    with pytest.raises(ConflictError, match="changed while"):
        app.writer.write_all(batch)
    stored = app.reader.list_records(project, include_inactive=True)
    assert [(r.id, r.status, r.priority) for r in stored] == [(kept.id, Status.ACTIVE, 1)]


def test_a_batch_is_stored_with_its_vectors(app: App) -> None:
    project = app.current_project()
    kept = app.writer.create(_draft("Builds need Node 20 or newer on every runner"), project)
    added, archived = app.writer.write_all(
        [
            app.writer.prepare_create(_draft("Deploys run from the release branch only"), project),
            app.writer.prepare_archive(kept.id),
        ]
    )
    assert app.reader.get(added.id).status is Status.ACTIVE
    assert app.reader.get(archived.id).status is Status.ARCHIVED
    assert app.vector_index is not None
    assert added.id in app.vector_index.vectors_of([added.id])


def test_preparing_each_tells_progress_up_to_every_draft_even_the_refused(app: App) -> None:
    project = app.current_project()
    drafts = [
        _draft("Deploys run from the release branch only"),
        _draft("x"),  # too short: refused before it is embedded
        _draft("Builds need Node 20 or newer on every runner"),
    ]
    told: list[int] = []

    prepared = app.writer.prepare_each(drafts, project, told.append)

    assert [type(p).__name__ for p in prepared][1] == "ValidationError"
    assert sum(told) == len(drafts)
