"""all-MiniLM-L6-v2 on both its runtimes (onnxruntime, and the numpy forward pass that embedded
existing stores and still runs one-shot commands) against vectors from sentence-transformers
and from that numpy pass."""

import json
import os
import subprocess
import sys
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


@pytest.fixture(scope="module", params=["onnxruntime", "numpy"])
def model(request: pytest.FixtureRequest) -> LocalMiniLM:
    """The packaged model as a warmed process runs it (onnxruntime), and as a one-shot
    command does (numpy), reading as far as sentence-transformers does; loaded once for the
    module."""
    loaded = LocalMiniLM(runtime=request.param, max_tokens=MAX_TOKENS)
    loaded.warm()
    assert loaded.runtime == request.param
    return loaded


@pytest.fixture(scope="module")
def stored() -> dict[str, Any]:
    """Texts and the vectors today's stores hold for them (the numpy forward pass)."""
    data: dict[str, Any] = json.loads(REFERENCE.read_text(encoding="utf-8"))["contextd_numpy"]
    assert len(data["texts"]) == len(data["vectors"]) == 18
    return data


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


def test_by_default_a_record_is_read_to_its_128th_word_piece() -> None:
    """What follows the first 128 word pieces changes nothing by default, and does when the
    model is told to read further (embeddings.max_tokens)."""
    words = " ".join(f"queue{n} worker" for n in range(60))  # ~150 word pieces
    head, longer = (
        f"Workers drain the task queue. {words}",
        f"Workers drain the task queue. {words} Redis",
    )
    default = LocalMiniLM(runtime="numpy")
    assert _cosine(*default.embed_documents([head, longer])) >= 0.99999
    further = LocalMiniLM(runtime="numpy", max_tokens=MAX_TOKENS)
    assert _cosine(*further.embed_documents([head, longer])) < 0.9999


@pytest.mark.parametrize("max_tokens", [0, MAX_TOKENS + 1])
def test_a_read_length_the_model_cannot_take_is_refused(max_tokens: int) -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        LocalMiniLM(max_tokens=max_tokens)


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
    with pytest.raises(ProviderUnavailableError, match="contextd model install"):
        provider.embed_query("anything")


def test_a_repeated_query_is_answered_from_the_cache_unchanged(model: LocalMiniLM) -> None:
    first = model.embed_query("where do auth tokens get validated")
    first.append(0.0)  # the caller's copy: changing it must not reach the cache
    again = model.embed_query("where do auth tokens get validated")
    assert again == first[:-1]
    assert again == model.embed_documents(["where do auth tokens get validated"])[0]


def test_a_warmed_model_or_many_texts_run_onnxruntime_one_text_first_runs_numpy() -> None:
    """onnxruntime takes 60-90 ms more to load: a one-shot command embedding one text is done
    sooner with numpy; the daemon, the MCP server and an ingest make it up many times over."""
    warmed = LocalMiniLM()
    warmed.warm()
    many = LocalMiniLM()
    many.embed_documents([f"note {i}" for i in range(20)])
    one = LocalMiniLM()
    one.embed_query("task queue")
    assert (warmed.runtime, many.runtime, one.runtime) == ("onnxruntime", "onnxruntime", "numpy")
    for provider in (warmed, many, one):
        assert provider.id == "local:all-MiniLM-L6-v2"  # the id stored vectors carry


def test_a_single_query_is_tokenized_without_padding(model: LocalMiniLM) -> None:
    tokenizer = model._load("one")[0]
    assert tokenizer.padding is None
    assert len(tokenizer.encode("task queue").ids) == 4  # [CLS] task queue [SEP]


def test_each_runtime_gives_the_vectors_stores_already_hold(
    model: LocalMiniLM, stored: dict[str, Any]
) -> None:
    """One at a time and batched (padding, several batches side by side): cosine >= 0.9999
    against the output of the numpy pass that embedded today's stores, so none needs
    re-embedding."""
    alone = [model.embed_query(text) for text in stored["texts"]]
    together = model.embed_documents(stored["texts"] * 2)
    for index, (text, theirs) in enumerate(zip(stored["texts"], stored["vectors"], strict=True)):
        assert _cosine(alone[index], theirs) >= 0.9999, text
        assert _cosine(together[index], theirs) >= 0.9999, text
        assert _cosine(together[index + len(alone)], theirs) >= 0.9999, text


def test_without_onnxruntime_fp32_falls_back_to_numpy(
    monkeypatch: pytest.MonkeyPatch, stored: dict[str, Any]
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # `import onnxruntime` now fails
    provider = LocalMiniLM()
    provider.warm()
    assert provider.runtime == "numpy"
    assert _cosine(provider.embed_query(stored["texts"][2]), stored["vectors"][2]) >= 0.9999


def test_without_onnxruntime_int8_is_unavailable_with_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Numpy would give fp32 vectors under the int8 id: refused instead, in one sentence."""
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    provider = LocalMiniLM(precision="int8")
    with pytest.raises(ProviderUnavailableError, match="set embeddings.precision to fp32"):
        provider.embed_query("anything")


def test_the_graph_is_cached_in_private_files_and_reused(tmp_path: Path) -> None:
    cache = tmp_path / "models"
    first = LocalMiniLM(cache_dir=cache)
    first.warm()
    vector = first.embed_query("where do auth tokens get validated")
    assert cache.stat().st_mode & 0o777 == 0o700
    files = sorted(p.name for p in cache.iterdir())
    assert files == ["all-MiniLM-L6-v2.fp32.json", "all-MiniLM-L6-v2.fp32.onnx"]
    for path in cache.iterdir():
        assert path.stat().st_mode & 0o777 == 0o600
    # The weights stay in the package: the graph references them instead of copying them.
    assert (cache / "all-MiniLM-L6-v2.fp32.onnx").stat().st_size < 100_000
    built = (cache / "all-MiniLM-L6-v2.fp32.onnx").stat().st_mtime_ns
    again = LocalMiniLM(cache_dir=cache)
    again.warm()
    assert again.embed_query("where do auth tokens get validated") == vector
    assert (cache / "all-MiniLM-L6-v2.fp32.onnx").stat().st_mtime_ns == built


@pytest.fixture(scope="module")
def int8(tmp_path_factory: pytest.TempPathFactory) -> LocalMiniLM:
    quantized = LocalMiniLM(precision="int8", cache_dir=tmp_path_factory.mktemp("models"))
    quantized.embed_query("warm up")
    return quantized


def test_int8_vectors_carry_their_own_id_and_stay_close_to_fp32(
    int8: LocalMiniLM, stored: dict[str, Any]
) -> None:
    assert int8.id == "local:all-MiniLM-L6-v2:int8"  # never mixed with fp32 vectors
    assert int8.runtime == "onnxruntime"
    cosines = []
    for text, theirs in zip(stored["texts"], stored["vectors"], strict=True):
        vector = int8.embed_query(text)
        assert len(vector) == 384 and abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
        cosines.append(_cosine(vector, theirs))
    assert min(cosines) >= 0.95 and float(np.mean(cosines)) >= 0.98


def test_int8_keeps_related_sentences_closer(int8: LocalMiniLM) -> None:
    queue, broker, weather = int8.embed_documents(
        [
            "Workers pull jobs from the task queue",
            "The message broker delivers jobs to workers",
            "It will rain in Lisbon tomorrow afternoon",
        ]
    )
    assert _cosine(queue, broker) > _cosine(queue, weather) + 0.1


def test_repacked_weights_give_the_vectors_of_weights_read_from_the_file(
    stored: dict[str, Any],
) -> None:
    """onnxruntime loaded for many calls repacks the weights; loaded for one (int8 one-shot
    commands) it reads them from the memory-mapped file. The vectors are the same."""
    warmed = LocalMiniLM()
    warmed.warm()
    direct = LocalMiniLM(runtime="onnxruntime")
    assert direct.runtime == "onnxruntime"
    for text in stored["texts"][:6]:
        assert _cosine(warmed.embed_query(text), direct.embed_query(text)) >= 0.99999


@pytest.mark.parametrize("warm", [False, True])
def test_a_damaged_weights_file_is_one_sentence_naming_the_reinstall(
    tmp_path: Path, warm: bool
) -> None:
    folder = find_model_dir()
    assert folder is not None
    for name in ("config.json", "tokenizer.json"):
        (tmp_path / name).write_bytes((folder / name).read_bytes())
    (tmp_path / "model.safetensors").write_bytes(
        b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all"
    )
    provider = LocalMiniLM(model_dir=tmp_path, cache_dir=tmp_path / "models")
    with pytest.raises(
        ProviderUnavailableError, match="cannot be read.*contextd model install --force"
    ):
        provider.warm() if warm else provider.embed_query("anything")
    assert not (tmp_path / "models").exists()  # nothing cached for a model that failed


def test_the_graph_is_built_in_a_child_so_onnx_never_loads_here(tmp_path: Path) -> None:
    """A daemon or MCP server that builds the graph on first use keeps neither `onnx` nor
    the quantizer's working memory (about 500 MB at its peak for int8); a warmed model never
    loads the numpy pass either (its peak memory would stay)."""
    script = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from contextd.embeddings.local import LocalMiniLM\n"
        f"model = LocalMiniLM(cache_dir=Path({str(tmp_path)!r}))\n"
        "model.warm()\n"
        "vector = model.embed_query('task queue')\n"
        "numpy_pass = 'contextd.embeddings.minilm_numpy' in sys.modules\n"
        "print(json.dumps({'onnx': 'onnx' in sys.modules, 'numpy_pass': numpy_pass,"
        " 'width': len(vector)}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
        timeout=300,
    )
    assert json.loads(done.stdout) == {"onnx": False, "numpy_pass": False, "width": 384}
    assert (tmp_path / "all-MiniLM-L6-v2.fp32.onnx").is_file()


def test_the_child_builds_the_graph_the_process_would(tmp_path: Path) -> None:
    from contextd.embeddings.minilm_graph import build_graph, build_in_child

    folder = find_model_dir()
    assert folder is not None
    assert build_in_child(folder, "fp32") == build_graph(folder, "fp32")
    with pytest.raises(RuntimeError, match="building the fp32 graph failed"):
        build_in_child(tmp_path, "fp32")  # no model there


def test_warming_a_model_that_already_answers_moves_it_to_onnxruntime() -> None:
    """A model that answered with the numpy pass hands over to onnxruntime when warmed: a
    query asked before, during or after gets the same vector."""
    provider = LocalMiniLM()
    before = provider.embed_documents(["why did we move the task queue off redis"])[0]
    assert provider.runtime == "numpy"
    provider.warm()
    assert provider.runtime == "onnxruntime"
    after = provider.embed_documents(["why did we move the task queue off redis"])[0]
    assert _cosine(before, after) >= 0.99999


def test_warming_in_steps_answers_with_numpy_first_then_onnxruntime() -> None:
    """The MCP server's warm-up: numpy answers at once, then onnxruntime takes over with the
    same vectors."""
    stepped = LocalMiniLM()
    stepped.warm_in_steps()
    assert stepped.runtime == "onnxruntime"
    direct = LocalMiniLM()
    direct.warm()
    text = "why did we move the task queue off redis"
    assert _cosine(stepped.embed_query(text), direct.embed_query(text)) >= 0.99999


def test_a_resident_process_runs_one_text_on_two_threads_an_ingest_two_calls_on_one() -> None:
    """Unless embeddings.threads is set: two threads per call where calls are mostly one text
    (the daemon, the MCP server), one per call where many texts run two calls at a time."""
    chosen = LocalMiniLM()
    workers = min(2, os.cpu_count() or 1)
    assert [chosen._threads_for(use) for use in ("resident", "many", "one")] == [workers, 1, 1]
    assert LocalMiniLM(threads=3)._threads_for("many") == 3
    warmed = LocalMiniLM()
    warmed.warm()
    text = "why did we move the task queue off redis"
    assert _cosine(warmed.embed_query(text), LocalMiniLM().embed_query(text)) >= 0.99999


def test_a_configured_read_length_the_model_cannot_take_is_one_clear_sentence(
    home: Path,
) -> None:
    config = home / "config.toml"
    config.write_text(
        '[embeddings]\nprovider = "local"\nmax_tokens = 1000\n[hooks]\nautostart_daemon = false\n',
        encoding="utf-8",
    )
    result = subprocess.run(
        [sys.executable, "-m", "contextd", "search", "task queue"],
        capture_output=True,
        encoding="utf-8",
        env=os.environ | {"CONTEXTD_HOME": str(home)},
        check=False,
    )
    assert result.returncode != 0
    assert "embeddings.max_tokens must be 1 to 256" in result.stderr
    assert "Traceback" not in result.stderr
