"""Ranking on the server equals ranking in SQLite: the same full-text candidates with the same
bm25 scores (FTS5's terms, FTS5's formula), and the same nearest vectors."""

import random
from pathlib import Path

import pytest

from contextd.app import App, open_app
from contextd.config import load_settings
from contextd.models import Kind, MemoryBody, Reach, RecordDraft
from contextd.storage.filters import RecordFilter
from contextd.storage.fts import fts_candidates, lexical_matches
from tests.conftest import use_server

WORDS = (
    "queue worker deploy schema migration token cache latency retry index shard postgres "
    "redis nats kafka billing invoice ledger auth session cookie header webhook cron backup "
    "restore replica failover running runs connections connected snake_case café naïve"
).split()
QUERIES = [
    "why did the queue workers retry",
    "postgres replica failover",
    "connecting to redis",
    "naive cafe",
    "billing",
    "the",
]


def _home(root: Path, name: str, url: str | None) -> Path:
    home = root / name
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text('[embeddings]\nprovider = "hashing"\n', encoding="utf-8")
    if url:
        use_server(home, url)
    return home


def _fill(app: App, rng: random.Random, count: int) -> dict[str, str]:
    project = app.projects.ensure("bench")
    drafts = [
        RecordDraft(
            kind=Kind.MEMORY,
            title=" ".join(rng.choices(WORDS, k=rng.randint(3, 9))) + f" {i}",
            body=MemoryBody(),
            category="note",
            tags=tuple(rng.sample(WORDS, 2)),
            retrieval_hints=(" ".join(rng.choices(WORDS, k=4)),),
        )
        for i in range(count)
    ]
    made = app.writer.create_many(drafts, project, force=True)
    return {r.id: r.title for r in made}


@pytest.mark.parametrize("count", [60, 2100])  # below and above the common-word rule's size
def test_full_text_candidates_and_scores_match_sqlite(
    tmp_path: Path, pg_url: str, count: int
) -> None:
    results = []
    for name, url in (("sqlite", None), ("server", pg_url)):
        with open_app(load_settings(home=_home(tmp_path, name, url))) as app:
            titles = _fill(app, random.Random(7), count)
            scope = RecordFilter(app.projects.ensure("bench").id)
            conn = app.db.connection()
            results.append(
                [
                    [
                        (titles[rid], round(score, 6))
                        for rid, score in fts_candidates(conn, q, scope, 20)
                    ]
                    for q in QUERIES
                ]
            )
    lite, server = results
    for query, mine, theirs in zip(QUERIES, lite, server, strict=True):
        assert [s for _, s in mine] == pytest.approx([s for _, s in theirs], rel=1e-5), query
        assert {t for t, _ in mine} == {t for t, _ in theirs} or len(mine) == 20, query


def test_coverage_and_each_words_rarity_match_sqlite(tmp_path: Path, pg_url: str) -> None:
    seen = []
    for name, url in (("sqlite", None), ("server", pg_url)):
        with open_app(load_settings(home=_home(tmp_path, name, url))) as app:
            _fill(app, random.Random(11), 60)
            scope = RecordFilter(app.projects.ensure("bench").id)
            conn = app.db.connection()
            seen.append([lexical_matches(conn, q, scope, 20) for q in QUERIES])
    for query, mine, theirs in zip(QUERIES, *seen, strict=True):
        assert mine.coverage == pytest.approx(theirs.coverage, rel=1e-6), query
        assert mine.idf == pytest.approx(theirs.idf, rel=1e-6), query
        assert mine.idf or not mine.hits, query


def test_nearest_vectors_match_the_exact_scan(tmp_path: Path, pg_url: str) -> None:
    found = []
    for name, url in (("sqlite", None), ("server", pg_url)):
        with open_app(load_settings(home=_home(tmp_path, name, url))) as app:
            titles = _fill(app, random.Random(11), 300)
            assert app.indexer is not None and app.vector_index is not None
            project = app.projects.ensure("bench")
            query = app.indexer.provider.embed_query("postgres replica failover and backups")
            found.append(
                [
                    (titles[rid], round(score, 5))
                    for rid, score in app.vector_index.search(query, Reach(project.id), 10)
                ]
            )
    assert [t for t, _ in found[0]] == [t for t, _ in found[1]]
    assert [s for _, s in found[0]] == pytest.approx([s for _, s in found[1]], abs=1e-4)


def test_a_word_fts5_splits_is_matched_term_by_term_on_the_server(app: App) -> None:
    # FTS5 reads snake_case as the phrase "snake case"; the server matches its terms (the one
    # known difference in ranking: such a record is found on both, scored a little apart).
    project = app.projects.ensure("bench")
    made = app.writer.create(
        RecordDraft(
            kind=Kind.MEMORY, title="Keys use snake_case", body=MemoryBody(), category="convention"
        ),
        project,
    )
    found = fts_candidates(app.db.connection(), "snake_case", RecordFilter(project.id), 5)
    assert [rid for rid, _ in found] == [made.id]


def test_other_spellings_of_compounds_and_cited_records_are_matched_on_the_server(
    app: App,
) -> None:
    project = app.projects.ensure("bench")
    made = [
        app.writer.create(
            RecordDraft(kind=Kind.MEMORY, title=title, body=MemoryBody(), category="note"),
            project,
        )
        for title in ("Re-platforming billing onto Kubernetes", "ADR017: Use Papertrail for logs")
    ]
    scope = RecordFilter(project.id)
    for text, wanted in (("replatforming", made[0]), ("ADR-0017", made[1])):
        found = fts_candidates(app.db.connection(), text, scope, 5)
        assert [rid for rid, _ in found][:1] == [wanted.id]


@pytest.fixture
def app(tmp_path: Path, pg_url: str) -> "App":  # type: ignore[misc]
    with open_app(load_settings(home=_home(tmp_path, "server", pg_url))) as opened:
        yield opened


def test_the_reach_leans_the_same_way_on_the_server(tmp_path: Path, pg_url: str) -> None:
    """The hub penalty reads the mean of the reach's vectors: pgvector's avg on the server,
    the numpy sum at home, alike."""
    centres = []
    for name, url in (("sqlite", None), ("server", pg_url)):
        with open_app(load_settings(home=_home(tmp_path, name, url))) as app:
            _fill(app, random.Random(5), 80)
            assert app.vector_index is not None
            centres.append(app.vector_index.centre(Reach(app.projects.ensure("bench").id)))
    mine, theirs = centres
    assert mine is not None and theirs is not None
    assert mine.count == theirs.count == 80
    assert mine.lean == pytest.approx(theirs.lean, abs=1e-5)
    assert mine.direction == pytest.approx(theirs.direction, abs=1e-5)


def test_long_records_are_as_near_as_their_nearest_window_on_the_server(
    tmp_path: Path, pg_url: str
) -> None:
    rng = random.Random(5)
    texts = [
        f"Handbook entry {i}\n" + " ".join(rng.choices(WORDS, k=rng.randint(40, 400)))
        for i in range(40)
    ]
    asked = "postgres replica failover backup restore"
    found = []
    for name, url in (("sqlite", None), ("server", pg_url)):
        with open_app(load_settings(home=_home(tmp_path, name, url))) as app:
            project = app.projects.ensure("bench")
            drafts = [
                RecordDraft(kind=Kind.MEMORY, title=t, body=MemoryBody(), category="note")
                for t in texts
            ]
            made = {r.id: r.title.split("\n")[0] for r in app.writer.create_many(drafts, project)}
            assert app.indexer is not None and app.vector_index is not None
            query = app.indexer.provider.embed_query(asked)
            nearest = app.vector_index.search(query, Reach(project.id), 10)
            every = app.vector_index.similarity(query, list(made))
            found.append(
                ([(made[r], s) for r, s in nearest], {made[r]: s for r, s in every.items()})
            )
            heads = app.vector_index.vectors_of(list(made))
            raised = [
                r
                for r in made
                if every[r] > sum(a * b for a, b in zip(query, heads[r], strict=True)) + 1e-6
            ]
            assert raised  # some long record is nearer by a later window than by its start
    (lite, lite_all), (server, server_all) = found
    assert lite_all == pytest.approx(server_all, abs=1e-4)  # every record scored alike
    # The server's index holds records' starts: what it finds is scored as SQLite scores it,
    # and its nearest is SQLite's, though a record near by a window alone may be missed.
    assert lite[0][0] == server[0][0]
    for title, score in server:
        assert score == pytest.approx(lite_all[title], abs=1e-4)
