"""A long record is as near a query as its nearest window: what it says past the first ~90
words reaches the meaning arm, in a fresh index and in one kept open across changes."""

from collections.abc import Iterator

import pytest

from contextd.app import App
from contextd.embeddings.base import text_hash
from contextd.embeddings.hashing import HashingEmbedder
from contextd.models import Kind, MemoryBody, Reach, RecordDraft, RecordEdit
from contextd.retrieval.indexer import Indexer, embedding_text
from contextd.retrieval.passages import PLAN, later_windows
from contextd.retrieval.vector_index import SqliteVectorIndex
from contextd.storage import vectors as rows

# The same long opening for every record, so their starts cannot tell them apart.
OPENING = " ".join(
    f"The platform team keeps this record as part of the service handbook, section {n}."
    for n in range(12)
)
ENDINGS = {
    "queue": "Background jobs moved from Redis lists to a PostgreSQL table with SKIP LOCKED.",
    "billing": "Invoices are rounded to whole cents with banker's rounding before storage.",
    "deploys": "Deploys go out through a blue green pipeline on weekday mornings only.",
}


class StartOnly(HashingEmbedder):
    """Reads a text's first 60 words, as the local model reads its first ~128 word pieces."""

    def _embed(self, text: str) -> list[float]:
        return super()._embed(" ".join(text.split()[:60]))


@pytest.fixture
def reading_starts(app: App) -> Iterator[Indexer]:
    """The app's writer and searches using a model that reads only a text's start."""
    indexer = Indexer(app.db, StartOnly())
    assert app.indexer is not None
    saved = app.indexer.provider
    app.indexer.provider = indexer.provider
    yield app.indexer
    app.indexer.provider = saved


def _store(app: App, title: str, body: str) -> str:
    """A memory keeps its text in its title: the headline, then the rest."""
    text = f"{title}\n{body}" if body else title
    draft = RecordDraft(Kind.MEMORY, text, MemoryBody(), category="note")
    return app.writer.create(draft, app.current_project(), force=True).id


def test_a_text_within_one_window_has_no_later_windows() -> None:
    assert later_windows(" ".join(["word"] * PLAN.words), "Lead") == []
    assert later_windows("", "Lead") == []


def test_later_windows_cover_the_rest_each_led_by_the_headline() -> None:
    words = [f"w{i}" for i in range(300)]
    windows = later_windows(" ".join(words), "Queue choice")
    step = PLAN.words - PLAN.overlap
    assert [w.split("\n")[0] for w in windows] == ["Queue choice"] * len(windows)
    bodies = [w.split("\n")[1].split() for w in windows]
    assert bodies[0][0] == f"w{step}"  # the first window (the record's own vector) is skipped
    assert all(len(b) <= PLAN.words for b in bodies)
    assert bodies[1][0] == f"w{2 * step}"
    assert bodies[-1][-1] == "w299"  # nothing at the end is left unread


def test_a_very_long_text_is_read_up_to_the_most_windows() -> None:
    windows = later_windows(" ".join(f"w{i}" for i in range(100_000)), "Lead")
    assert len(windows) == PLAN.most


def test_a_record_is_found_by_what_it_says_past_its_start(
    app: App, reading_starts: Indexer
) -> None:
    ids = {
        topic: _store(app, f"Handbook entry: {topic}", f"{OPENING} {end}")
        for topic, end in ENDINGS.items()
    }
    provider = reading_starts.provider
    index = SqliteVectorIndex(app.db, provider.id, provider.dimensions)
    reach = Reach(app.current_project().id)
    for topic, ending in ENDINGS.items():
        query = provider.embed_query(ending)
        found = index.search(query, reach, 3)
        assert found[0][0] == ids[topic], topic
        head = index.vectors_of([ids[topic]])[ids[topic]]
        start = sum(a * b for a, b in zip(query, head, strict=True))
        assert found[0][1] > start + 0.2  # its last window holds the sentence; its start not
        assert index.similarity(query, list(ids.values()))[ids[topic]] == pytest.approx(
            found[0][1], abs=1e-6
        )
        # What the relevance floor and the duplicate guard read: the records' starts alone.
        starts = dict(index.search(query, reach, 3, starts_only=True))
        assert starts[ids[topic]] == pytest.approx(start, abs=1e-6)
        only = index.similarity(query, [ids[topic]], starts_only=True)
        assert only[ids[topic]] == pytest.approx(start, abs=1e-6)


def test_an_index_kept_open_follows_windows_added_changed_and_removed(
    app: App, reading_starts: Indexer
) -> None:
    provider = reading_starts.provider
    kept = SqliteVectorIndex(app.db, provider.id, provider.dimensions)
    reach = Reach(app.current_project().id)
    short = _store(app, "A short note about the staging database password rotation", "")
    ids = [_store(app, f"Handbook entry {t}", f"{OPENING} {e}") for t, e in ENDINGS.items()]
    query = provider.embed_query(ENDINGS["billing"])

    def agree() -> list[tuple[str, float]]:
        fresh = SqliteVectorIndex(app.db, provider.id, provider.dimensions)
        mine, theirs = kept.search(query, reach, 10), fresh.search(query, reach, 10)
        assert [rid for rid, _ in mine] == [rid for rid, _ in theirs]
        assert [s for _, s in mine] == pytest.approx([s for _, s in theirs], abs=1e-6)
        every = [short, *ids]
        assert kept.similarity(query, every) == pytest.approx(fresh.similarity(query, every))
        return mine

    before = agree()
    assert before[0][0] == ids[1]
    app.writer.update(ids[1], RecordEdit(title="Handbook entry billing: moved to the vendor."))
    assert dict(agree())[ids[1]] < before[0][1] / 2  # its windows went with their text
    was = dict(agree())[short]
    grown = f"Staging\n{OPENING} {' '.join([ENDINGS['billing']] * 8)}"
    app.writer.update(short, RecordEdit(title=grown))
    assert dict(agree())[short] > was + 0.2  # a record that grew long gained windows
    app.writer.delete(short)
    assert short not in dict(agree())


def test_a_new_cut_re_embeds_long_records_only(app: App) -> None:
    """Vectors made before records had windows (or with another cut) are stale for long
    records alone: `refresh` re-embeds those, a store of short notes is left as it is."""
    long_one = _store(app, "Handbook entry", f"{OPENING} {ENDINGS['queue']}")
    short = _store(app, "Deploys go out on weekday mornings", "")
    assert app.indexer is not None
    records = [app.reader.get(long_one), app.reader.get(short)]
    assert app.indexer.stale(records) == []
    with app.db.transaction() as conn:  # as an older contextd stored them: no windows
        for record in records:
            text = embedding_text(record)
            vector = app.indexer.provider.embed_documents([text])[0]
            old = rows.EmbeddingRow(record.id, app.indexer.provider.id, text_hash(text), vector)
            rows.upsert_embeddings(conn, [old], "2026-01-01T00:00:00Z")
    assert [r.id for r in app.indexer.stale(records)] == [long_one]
    app.indexer.embed(app.indexer.stale(records))
    assert app.indexer.stale(records) == []
    stored = rows.stored_passages(
        app.db.connection(),
        app.indexer.provider.id,
        app.indexer.provider.dimensions,
        [long_one, short],
    )
    assert list(stored) == [long_one]


def test_re_embedding_shows_progress_often_and_resumes_where_it_was_stopped(app: App) -> None:
    """Long records are embedded a few at a time, each few kept at once: a refresh stopped
    half way (Ctrl-C) loses only the batch under way, and the next embeds only the rest."""
    made = [_store(app, f"Handbook entry {n}", " ".join([OPENING] * 4)) for n in range(12)]
    assert app.indexer is not None
    with app.db.transaction() as conn:
        conn.execute("DELETE FROM embeddings")
    seen: list[tuple[int, int]] = []

    def stop_half_way(done: int, total: int) -> None:
        seen.append((done, total))
        if done >= total // 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        app.index.refresh(progress=stop_half_way)
    assert seen[0][0] < len(made)  # a tick comes before the end
    kept = app.indexer.stale([app.reader.get(rid) for rid in made])
    assert 0 < len(kept) < len(made)
    assert app.index.pending() == len(kept)
    assert app.index.refresh() == len(kept)
    assert app.index.pending() == 0


def test_a_note_alike_one_passage_of_a_long_record_is_not_its_duplicate(
    app: App, reading_starts: Indexer
) -> None:
    """The duplicate guard compares whole records (their starts), not passages: a short note
    that repeats one sentence of a long handbook entry is stored without a question."""
    passage = " ".join(f"{ENDINGS['queue']} Step {n}." for n in range(6))
    words = f"Handbook entry: queue\n{OPENING}".split()
    filler = " ".join(words[: 2 * PLAN.words])  # the passage is the record's third window
    long_one = _store(app, filler.split(" ", 3)[0], f"{filler} {passage}")
    note = app.writer.create(
        RecordDraft(Kind.MEMORY, passage, MemoryBody(), category="note"),
        app.current_project(),
        force=True,
    )
    guard = app.writer._guard
    assert guard is not None
    vector = reading_starts.provider.embed_documents([embedding_text(note)])[0]
    near = {s.record.id: s.similarity for s in guard.near(note, vector)}
    index = SqliteVectorIndex(app.db, reading_starts.provider.id, 384)
    assert index.similarity(vector, [long_one])[long_one] > 0.8  # its window is the note
    assert near.get(long_one, 0.0) < 0.5  # but the record as a whole is not
