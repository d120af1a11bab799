"""all-MiniLM-L6-v2 on onnxruntime (CPU): one session over the graph built by minilm_graph.

The graph comes in as bytes; its weights are read from the model folder (ONNX external data,
memory-mapped by onnxruntime), which is why the session is told that folder. The word
embeddings are not among them: each call reads its tokens' rows from the file (see
minilm_graph), a few microseconds a token.
"""

from pathlib import Path
from typing import Any

from contextd.embeddings.minilm_graph import WEIGHTS_FILE, WORD_EMBEDDINGS
from contextd.embeddings.weights import RowReader
from contextd.errors import ProviderUnavailableError

__all__ = ["OnnxBert"]


class OnnxBert:
    """forward(ids, mask) -> unit vectors, for int64 token ids and mask of shape (batch, width).

    `threads` is onnxruntime's intra-op thread count for one call. With one, several calls may
    run side by side (the session is thread-safe and releases the GIL while it computes).

    `prepack` lets onnxruntime repack the linear weights for its kernels when the session
    loads: measured in CPU time, +55 ms to load and a private copy of the 42 MB of weights,
    for -2.9 ms per query (5.2 instead of 8.1) and -10% per note in batches. Worth it from
    about twenty calls on (a resident process, an ingest); without it the weights are used
    straight from the memory-mapped file, which processes share.
    """

    name = "onnxruntime"

    def __init__(
        self, graph: bytes, folder: Path, *, threads: int = 1, prepack: bool = True
    ) -> None:
        import numpy
        import onnxruntime

        self._np = numpy
        self._words = RowReader(folder / WEIGHTS_FILE, WORD_EMBEDDINGS)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only: warnings would reach the CLI's stderr
        # Idle helper threads sleep instead of spinning: the machine is shared with the agent.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry(
            "session.model_external_initializers_file_folder_path", str(folder)
        )
        if not prepack:
            options.add_session_config_entry("session.disable_prepacking", "1")
        self.concurrent = threads == 1
        try:
            self._session = onnxruntime.InferenceSession(
                graph, options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime's errors share no base class but Exception
            raise RuntimeError(f"onnxruntime cannot load the graph: {exc}") from exc

    def forward(self, ids: Any, mask: Any) -> Any:
        try:
            words = self._words.take(self._np, ids)
            return self._session.run(None, {"word_vectors": words, "attention_mask": mask})[0]
        except Exception as exc:  # as above; retrieval then falls back to full-text
            raise ProviderUnavailableError(f"The local model failed to run: {exc}") from exc
