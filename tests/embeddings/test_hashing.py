"""The model-free feature-hashing provider."""

import math

import pytest

from contextd.config import EmbeddingSettings
from contextd.embeddings import select_provider
from contextd.embeddings.hashing import HashingEmbedder
from contextd.errors import ConfigError


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


def test_select_provider_gives_hashing_the_configured_width() -> None:
    choice = select_provider(EmbeddingSettings(provider="hashing", dimensions=64))
    assert choice.note is None
    assert isinstance(choice.provider, HashingEmbedder)
    assert choice.provider.id == "hashing:v1:64"
    assert len(choice.provider.embed_query("task queue")) == 64


@pytest.mark.parametrize("dimensions", [0, -8])
def test_select_provider_refuses_a_non_positive_hashing_width(dimensions: int) -> None:
    """select_provider documents ConfigError for a non-positive width, for every provider."""
    with pytest.raises(ConfigError, match="embeddings.dimensions"):
        select_provider(EmbeddingSettings(provider="hashing", dimensions=dimensions))
