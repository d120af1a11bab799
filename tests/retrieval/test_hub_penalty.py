"""The hub penalty: a record's cosine with the query, less how much further than the average
record its vector leans toward the mean of the reach's vectors."""

import numpy as np
import pytest
from msgspec.structs import replace

from contextd.app import App
from contextd.models import Kind, MemoryBody, Reach, RecordDraft
from contextd.retrieval.semantic import HUB_FEWEST, SemanticSearch

TOPICS = (
    "billing invoices rounding",
    "deploys pipeline mornings",
    "job queue postgres locks",
    "session cookies tokens",
    "schema migrations transactions",
    "webhook retries backoff",
    "search index rebuild",
    "feature flags toggles",
    "logs loki retention",
    "graphql gateway mobile",
    "vault secrets injection",
    "image resizing uploads",
)


def _fill(app: App, count: int) -> Reach:
    project = app.current_project()
    drafts = [
        RecordDraft(Kind.MEMORY, f"{TOPICS[i % len(TOPICS)]} note {i}", MemoryBody(), "note")
        for i in range(count)
    ]
    # One generic record that speaks of everything: the hub.
    drafts.append(RecordDraft(Kind.MEMORY, "Overview: " + ", ".join(TOPICS), MemoryBody(), "note"))
    app.writer.create_many(drafts, project, force=True)
    return Reach(project.id)


def _semantic(app: App, penalty: float) -> SemanticSearch:
    assert app.indexer is not None and app.vector_index is not None
    weights = replace(app.settings.search, hub_penalty=penalty)
    return SemanticSearch(app.db, app.indexer, app.vector_index, weights)


def test_each_cosine_loses_how_far_its_record_leans_past_the_average(app: App) -> None:
    reach = _fill(app, 30)
    meaning = _semantic(app, 0.5).meaning("postgres job queue retries", reach, 50, [])
    assert app.vector_index is not None
    vectors = app.vector_index.vectors_of(list(meaning.cosines))
    assert len(vectors) == 31  # every record is in the pool
    mean = np.mean(list(vectors.values()), axis=0)
    direction = mean / np.linalg.norm(mean)
    average = float(np.mean([np.dot(v, direction) for v in vectors.values()]))
    for rid, cosine in meaning.cosines.items():
        lean = float(np.dot(vectors[rid], direction))
        assert meaning.relevance[rid] == pytest.approx(cosine - 0.5 * (lean - average), abs=1e-5)
    hub = max(vectors, key=lambda rid: float(np.dot(vectors[rid], direction)))
    assert meaning.relevance[hub] < meaning.cosines[hub]  # the overview leans the most


def test_without_a_penalty_or_in_a_small_reach_the_cosines_rank_as_they_are(app: App) -> None:
    reach = _fill(app, 30)
    meaning = _semantic(app, 0.0).meaning("postgres job queue retries", reach, 50, [])
    assert meaning.relevance == meaning.cosines


def test_a_reach_too_small_to_have_hubs_is_left_alone(app: App) -> None:
    reach = _fill(app, HUB_FEWEST - 2)  # with the overview: one short of the fewest
    meaning = _semantic(app, 0.5).meaning("postgres job queue retries", reach, 50, [])
    assert len(meaning.cosines) == HUB_FEWEST - 1
    assert meaning.relevance == meaning.cosines
