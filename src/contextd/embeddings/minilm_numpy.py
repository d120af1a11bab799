"""all-MiniLM-L6-v2 as a numpy forward pass: the fallback when onnxruntime cannot load.

Its vectors are those of the ONNX graph (and of sentence-transformers), so a store embedded by
one is current for the other. It is about 2.5x slower per query and per batch.
"""

import json
import math
from pathlib import Path
from typing import Any

from contextd.embeddings.weights import map_float32
from contextd.threads import single_blas_thread

__all__ = ["NumpyBert"]


class NumpyBert:
    """forward(ids, mask) -> unit vectors, for int64 token ids and mask of shape (batch, width)."""

    name = "numpy"

    def __init__(self, folder: Path) -> None:
        # Batches may run side by side on two cores only when BLAS itself runs one thread.
        self.concurrent = single_blas_thread()
        import numpy as np  # deferred: loaded only when vectors are needed

        self.np = np
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.w: dict[str, Any] = map_float32(np, folder / "model.safetensors")
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

    def forward(self, ids: Any, mask: Any) -> Any:
        np, w = self.np, self.w
        mask = mask.astype(np.float32)
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
