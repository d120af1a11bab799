"""The model-free feature-hashing provider."""

import math

import pytest

from contextd.embeddings.hashing import HashingEmbedder


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_the_same_text_gives_the_same_vector_in_separate_instances() -> None:
    text = "GPU scheduler uses NATS for task transport"
    first = HashingEmbedder().embed_query(text)
    second = HashingEmbedder().embed_documents([text, "something else"])[0]
    assert first == second
    assert HashingEmbedder().embed_query("something else") != first


def test_vectors_are_unit_length() -> None:
    for text in ("a", "Use NATS for the task queue", "Ünïcödé 中文 🚀 " * 20):
        vector = HashingEmbedder().embed_query(text)
        assert math.isclose(math.sqrt(_dot(vector, vector)), 1.0, rel_tol=1e-9)


@pytest.mark.parametrize("dimensions", [8, 64, 384, 1000])
def test_width_follows_dimensions(dimensions: int) -> None:
    embedder = HashingEmbedder(dimensions)
    assert embedder.dimensions == dimensions
    assert embedder.id == f"hashing:v1:{dimensions}"
    vectors = embedder.embed_documents(["task queue", "deploy workers"])
    assert [len(v) for v in vectors] == [dimensions, dimensions]


def test_texts_sharing_words_are_closer_than_unrelated_texts() -> None:
    embedder = HashingEmbedder()
    query = embedder.embed_query("task queue for workers")
    related = embedder.embed_query("Use NATS for the task queue")
    unrelated = embedder.embed_query("Lisbon weather tomorrow afternoon")
    assert _dot(query, related) > _dot(query, unrelated) + 0.2


def test_empty_text_gives_a_finite_vector() -> None:
    for text in ("", "   ", "!?."):
        vector = HashingEmbedder().embed_query(text)
        assert len(vector) == 384
        assert all(math.isfinite(x) for x in vector)
