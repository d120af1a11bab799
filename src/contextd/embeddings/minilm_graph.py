"""The ONNX graph of all-MiniLM-L6-v2 (BERT encoder, masked mean pooling, L2 norm), built with
the `onnx` helper API over the packaged safetensors weights; nothing is downloaded.

fp32: every weight is an initializer whose data lives *in the safetensors file* (ONNX external
data: location, offset, length), so the graph itself is ~25 KB, nothing is copied, and
onnxruntime memory-maps the weights. Linear layers are `Gemm(x, W, b, transB=1)`: the weights
stay (out, in) as stored. int8: the linear weights are quantized per output channel by
onnxruntime's dynamic quantization (activations per call at run time); the embeddings, norms
and biases still point at the safetensors file.

The word embeddings are no initializer: the graph takes each token's row as an input, which
the caller reads from the file (see minilm_onnx). Mapped, that 47 MB table became resident
page by page, the kernel mapping the neighbours of each page a token touched: ~30 MiB of a
daemon after 200 writes, for rows of 1.5 KB.

`onnx` (~0.7 s to import) is imported by build_graph only: running a cached graph needs
onnxruntime alone.
"""

import json
import logging
import math
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contextd.embeddings.weights import WeightsHeader, map_float32, read_header

if TYPE_CHECKING:
    from onnx import ModelProto, NodeProto, TensorProto

__all__ = ["BUILDER", "PRECISIONS", "WEIGHTS_FILE", "WORD_EMBEDDINGS", "build_graph"]

BUILDER = 2  # bump when the graph changes: graphs cached by another version are rebuilt
PRECISIONS = ("fp32", "int8")
WEIGHTS_FILE = "model.safetensors"
WORD_EMBEDDINGS = "embeddings.word_embeddings.weight"
MODEL_NAME = "all-MiniLM-L6-v2"
OPSET = 18  # LayerNormalization (17) and reduce ops taking axes as an input (18)


def build_graph(folder: Path, precision: str) -> bytes:
    """The serialized graph for the model in `folder` (config.json + model.safetensors).

    Inputs `word_vectors` (float32, batch x width x hidden: each token's row of the word
    embeddings, WORD_EMBEDDINGS) and `attention_mask` (int64, batch x width); output
    `sentence_embedding` (float32, batch x hidden), unit length.

    Raises:
        OSError: the model files cannot be read.
        ValueError: they are not a BERT model this builder knows, or `precision` is unknown.
        ImportError: `onnx` (or, for int8, onnxruntime's quantizer) is not installed.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    header = read_header(folder / WEIGHTS_FILE)
    # int8: the quantizer reads every tensor, so that graph is first built with copies inline.
    weights = map_float32(_numpy(), folder / WEIGHTS_FILE) if precision == "int8" else None
    model = _Encoder(config, header, weights).model()
    if precision == "int8":
        model = _point_at_weights(_quantize(model), header)
    return bytes(model.SerializeToString())


def _numpy() -> Any:
    import numpy

    return numpy


class _Encoder:
    """Collects nodes and initializers while it writes the graph out layer by layer."""

    def __init__(
        self, config: dict[str, Any], header: WeightsHeader, weights: dict[str, Any] | None
    ) -> None:
        if config.get("hidden_act", "gelu") != "gelu":
            raise ValueError("only BERT models with the exact (erf) GELU are supported")
        self.hidden = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.header = header
        self.weights = weights  # numpy views: tensors inline, for the graph to quantize
        self.nodes: list[NodeProto] = []
        self.initializers: list[TensorProto] = []
        self._named: set[str] = set()

    def model(self) -> "ModelProto":
        from onnx import TensorProto, helper

        x = self._embeddings()
        bias = self._attention_bias()
        for layer in range(self.layers):
            x = self._layer(x, bias, f"encoder.layer.{layer}.")
        self._pool(x)
        words, mask, out = "word_vectors", "attention_mask", "sentence_embedding"
        graph = helper.make_graph(
            self.nodes,
            MODEL_NAME,
            [
                helper.make_tensor_value_info(
                    words, TensorProto.FLOAT, ["batch", "width", self.hidden]
                ),
                helper.make_tensor_value_info(mask, TensorProto.INT64, ["batch", "width"]),
            ],
            [helper.make_tensor_value_info(out, TensorProto.FLOAT, ["batch", self.hidden])],
            self.initializers,
        )
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="contextd"
        )
        model.ir_version = 8  # the oldest that opset 18 allows
        return model

    # -- building blocks ---------------------------------------------------------------

    def op(self, op_type: str, *inputs: str, output: str | None = None, **attrs: Any) -> str:
        from onnx import helper

        name = output or f"{op_type.lower()}_{len(self.nodes)}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [name], **attrs))
        return name

    def weight(self, name: str) -> str:
        """A float32 tensor of the safetensors file, referenced in place (external data); a
        copy inline while building the graph to quantize, which reads every tensor."""
        if name not in self._named:
            self._named.add(name)
            tensor = _external(name, self.header)
            if self.weights is not None:
                tensor = _tensor(self.weights[name], name)
            self.initializers.append(tensor)
        return name

    def const(self, name: str, value: Any, dtype: str = "float32") -> str:
        if name not in self._named:
            self._named.add(name)
            self.initializers.append(_tensor(_numpy().asarray(value, dtype=dtype), name))
        return name

    def linear(self, x: str, prefix: str) -> str:
        """x @ W.T + b for W stored (out, in), x of shape (tokens, in)."""
        if self.weights is None:
            weight, bias = self.weight(prefix + ".weight"), self.weight(prefix + ".bias")
            return self.op("Gemm", x, weight, bias, transB=1)
        # To quantize: MatMul is what onnxruntime's dynamic quantizer takes, with the weight
        # as (in, out). Its int8 copy replaces it, so this transposed one is not kept.
        name = prefix + ".weight.T"
        if name not in self._named:
            self._named.add(name)
            transposed = _numpy().ascontiguousarray(self.weights[prefix + ".weight"].T)
            self.initializers.append(_tensor(transposed, name))
        return self.op("Add", self.op("MatMul", x, name), self.weight(prefix + ".bias"))

    def norm(self, x: str, prefix: str) -> str:
        weight, bias = self.weight(prefix + ".weight"), self.weight(prefix + ".bias")
        return self.op("LayerNormalization", x, weight, bias, axis=-1, epsilon=self.eps)

    # -- the model ---------------------------------------------------------------------

    def _embeddings(self) -> str:
        """Word + position + token type 0 embeddings, normalised; shape (tokens, hidden)."""
        shape = self.op("Shape", "attention_mask", output="text_shape")
        one, zero = self.const("one", 1, "int64"), self.const("zero", 0, "int64")
        positions = self.op("Range", zero, self.op("Gather", shape, one, axis=0), one)
        words = "word_vectors"
        where = self.op("Gather", self.weight("embeddings.position_embeddings.weight"), positions)
        kind = self.op("Gather", self.weight("embeddings.token_type_embeddings.weight"), zero)
        summed = self.op("Add", self.op("Add", words, where), kind)
        return self.norm(self.op("Reshape", summed, self._tokens()), "embeddings.LayerNorm")

    def _tokens(self) -> str:
        """The shape (tokens, hidden): one row per token of the whole batch."""
        return self.const("tokens_by_hidden", [-1, self.hidden], "int64")

    def _attention_bias(self) -> str:
        """-1e9 on padding keys, 0 elsewhere; shape (batch, 1, 1, width)."""
        from onnx import TensorProto

        mask = self.op("Cast", "attention_mask", to=TensorProto.FLOAT, output="mask")
        padding = self.op("Sub", self.const("one_f", 1.0), mask)
        bias = self.op("Mul", padding, self.const("minus_big", -1e9))
        return self.op("Unsqueeze", bias, self.const("axes_1_2", [1, 2], "int64"))

    def _layer(self, x: str, bias: str, p: str) -> str:
        size = self.hidden // self.heads
        split = self.const("heads_by_size", [self.heads, size], "int64")
        by_heads = self.op("Concat", "text_shape", split, axis=0)  # batch, width, heads, size

        def heads(name: str, perm: list[int]) -> str:
            projected = self.linear(x, p + f"attention.self.{name}")
            return self.op("Transpose", self.op("Reshape", projected, by_heads), perm=perm)

        q = heads("query", [0, 2, 1, 3])
        k = heads("key", [0, 2, 3, 1])
        v = heads("value", [0, 2, 1, 3])
        scores = self.op("Mul", self.op("MatMul", q, k), self.const("scale", 1 / math.sqrt(size)))
        weights = self.op("Softmax", self.op("Add", scores, bias), axis=-1)
        context = self.op("Transpose", self.op("MatMul", weights, v), perm=[0, 2, 1, 3])
        context = self.op("Reshape", context, self._tokens())
        attended = self.op("Add", self.linear(context, p + "attention.output.dense"), x)
        x = self.norm(attended, p + "attention.output.LayerNorm")
        inner = self._gelu(self.linear(x, p + "intermediate.dense"))
        out = self.op("Add", self.linear(inner, p + "output.dense"), x)
        return self.norm(out, p + "output.LayerNorm")

    def _gelu(self, x: str) -> str:
        """0.5 x (1 + erf(x / sqrt 2)), in the form onnxruntime fuses into one Gelu kernel."""
        erf = self.op("Erf", self.op("Div", x, self.const("sqrt2", math.sqrt(2.0))))
        scaled = self.op("Mul", x, self.op("Add", erf, self.const("one_f", 1.0)))
        return self.op("Mul", scaled, self.const("half", 0.5))

    def _pool(self, x: str) -> None:
        """Mean over the unmasked tokens, then unit length: sentence-transformers' pooling."""
        hidden = self.const("hidden", [self.hidden], "int64")
        by_text = self.op("Reshape", x, self.op("Concat", "text_shape", hidden, axis=0))
        axis_1 = self.const("axis_1", [1], "int64")
        weights = self.op("Unsqueeze", "mask", self.const("axis_2", [2], "int64"))
        summed = self.op("ReduceSum", self.op("Mul", by_text, weights), axis_1, keepdims=0)
        count = self.op("ReduceSum", "mask", axis_1, keepdims=1)
        pooled = self.op("Div", summed, self.op("Max", count, self.const("tiny", 1e-9)))
        length = self.op("ReduceL2", pooled, axis_1, keepdims=1)
        longest = self.op("Max", length, self.const("tinier", 1e-12))
        self.op("Div", pooled, longest, output="sentence_embedding")


def _tensor(array: Any, name: str) -> "TensorProto":
    from onnx import numpy_helper

    return numpy_helper.from_array(array, name)


def _external(name: str, header: WeightsHeader) -> "TensorProto":
    """An initializer whose data is the tensor's bytes inside the safetensors file."""
    from onnx import TensorProto

    found = header.tensors.get(name)
    if found is None or found.dtype != "F32":
        raise ValueError(f"{WEIGHTS_FILE} has no float32 tensor {name!r}")
    tensor = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=list(found.shape))
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (
        ("location", WEIGHTS_FILE),
        ("offset", str(found.offset)),
        ("length", str(found.length)),
    ):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return tensor


def _quantize(model: "ModelProto") -> "ModelProto":
    """Dynamic int8 quantization of the linear layers, weights per output channel (per-tensor
    weights moved vectors to a cosine of 0.88 with fp32 on the reference texts; per channel
    keeps them near 0.99). The model arrives with every tensor inline."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="contextd-int8-") as scratch:
        source, target = Path(scratch) / "fp32.onnx", Path(scratch) / "int8.onnx"
        onnx.save(model, source)
        quiet = _QuantizerAdvice()
        logging.getLogger().addFilter(quiet)
        try:
            quantize_dynamic(
                source,
                target,
                op_types_to_quantize=["MatMul"],
                per_channel=True,
                weight_type=QuantType.QInt8,
                extra_options={"MatMulConstBOnly": True},
            )
        finally:
            logging.getLogger().removeFilter(quiet)
        return onnx.load(target)


class _QuantizerAdvice(logging.Filter):
    """Drops the quantizer's advice ("consider pre-processing") from the root logger."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "onnxruntime" not in record.pathname.replace("\\", "/")


def _point_at_weights(model: "ModelProto", header: WeightsHeader) -> "ModelProto":
    """Initializers that are unchanged safetensors tensors go back to referencing the file."""
    for tensor in model.graph.initializer:
        found = header.tensors.get(tensor.name)
        if found is not None and found.dtype == "F32" and tuple(tensor.dims) == found.shape:
            tensor.CopyFrom(_external(tensor.name, header))
    return model


def build_in_child(folder: Path, precision: str) -> bytes:
    """build_graph in a child process, so that `onnx` (~50 MB once imported) and the
    quantizer's working memory (~500 MB at its peak for int8) never stay in a long-lived
    process such as the daemon or the MCP server. Where no child can be started, here.

    Raises:
        RuntimeError: the child failed (its last line of stderr says why).
    """
    import subprocess
    import sys

    command = [sys.executable, "-m", __name__, str(folder), precision]
    try:
        done = subprocess.run(command, capture_output=True, timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return build_graph(folder, precision)
    if done.returncode != 0 or not done.stdout:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError(f"building the {precision} graph failed: {(lines or ['?'])[-1]}")
    return done.stdout


def _main(argv: list[str]) -> int:
    """`python -m contextd.embeddings.minilm_graph FOLDER PRECISION`: the graph on stdout."""
    import sys

    try:
        graph = build_graph(Path(argv[0]), argv[1])
    except (ImportError, OSError, ValueError, KeyError) as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    sys.stdout.buffer.write(graph)
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(_main(sys.argv[1:]))
