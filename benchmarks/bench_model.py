"""The local model alone, every way it can run, side by side in one process (ratios hold when
a shared machine's speed drifts): numpy (what a one-shot command runs, the fallback, and what
contextd ran for everything before 2026-12), onnxruntime fp32 loaded for one call (weights read
from the file) and warmed (weights repacked, as the daemon, the MCP server and an ingest load
it), and int8 warmed.

Run: .venv/bin/python benchmarks/bench_model.py [--rounds 200] [--notes 256]

Prints, per variant: one short query's p50 (wall and CPU, and the CPU ratio to numpy), notes
embedded per second through embed_documents (batches of 64, as the indexer sends them; two
batches run side by side) with the CPU time per note, and a cold process's time from start to
its first query vector (median of 5 processes, loading as a one-shot command would).
"""

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _one_shot  # noqa: F401  (one BLAS thread, as the CLI runs)
from bench_retrieval import QUERIES, sentence

from contextd.embeddings.local import LocalMiniLM

VARIANTS: dict[str, dict[str, object]] = {
    "numpy": {"runtime": "numpy"},
    "onnx fp32 1 call": {"runtime": "onnxruntime"},
    "onnx fp32 warmed": {"warm": True},
    "onnx int8 warmed": {"precision": "int8", "warm": True},
}
COLD = """
import time, sys
started = time.perf_counter()
from pathlib import Path
from contextd.embeddings.local import LocalMiniLM
model = LocalMiniLM(runtime={runtime!r}, precision={precision!r}, cache_dir=Path({cache!r}))
model.embed_query("why did we move the task queue off redis")
print(time.perf_counter() - started)
"""


def make(cache: Path, options: dict[str, object]) -> LocalMiniLM:
    model = LocalMiniLM(
        runtime=options.get("runtime"),  # type: ignore[arg-type]
        precision=str(options.get("precision", "fp32")),
        cache_dir=cache,
    )
    if options.get("warm"):
        model.warm()
    model.embed_query("load")
    return model


def cold(cache: Path, options: dict[str, object]) -> float:
    code = COLD.format(
        runtime=options.get("runtime"),
        precision=str(options.get("precision", "fp32")),
        cache=str(cache),
    )
    runs = []
    for _ in range(5):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        runs.append(time.perf_counter() - started)
    return statistics.median(runs) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--notes", type=int, default=256)
    args = parser.parse_args()
    rng = random.Random(7)
    notes = [sentence(rng) for _ in range(args.notes)]
    with tempfile.TemporaryDirectory() as scratch:
        cache = Path(scratch)
        models = {name: make(cache, options) for name, options in VARIANTS.items()}
        wall: dict[str, list[float]] = {name: [] for name in models}
        cpu: dict[str, list[float]] = {name: [] for name in models}
        for i in range(args.rounds):
            text = f"{QUERIES[i % len(QUERIES)]} {i}"  # unique: the query cache must not answer
            for name, model in models.items():
                started, used = time.perf_counter(), time.process_time()
                model.embed_query(text)
                wall[name].append((time.perf_counter() - started) * 1000)
                cpu[name].append((time.process_time() - used) * 1000)
        rates: dict[str, list[float]] = {name: [] for name in models}
        per_note: dict[str, list[float]] = {name: [] for name in models}
        for _ in range(3):
            for name, model in models.items():
                started, used = time.perf_counter(), time.process_time()
                for start in range(0, len(notes), 64):
                    model.embed_documents(notes[start : start + 64])
                rates[name].append(len(notes) / (time.perf_counter() - started))
                per_note[name].append((time.process_time() - used) * 1000 / len(notes))
        # A cold process loads as a one-shot command does (no warm-up).
        colds = {name: cold(cache, VARIANTS[name]) for name in models if "warmed" not in name}
        colds["onnx int8 warmed"] = cold(cache, {"precision": "int8"})
    base = statistics.median(cpu["numpy"])
    print(
        f"{'':17} {'query p50':>10} {'cpu':>7} {'cpu x':>6} {'notes/s':>8} {'cpu/note':>9} "
        f"{'cold process':>13}"
    )
    for name in models:
        p50 = statistics.median(cpu[name])
        print(
            f"{name:17} {statistics.median(wall[name]):8.2f}ms {p50:5.2f}ms {base / p50:5.1f}x "
            f"{statistics.median(rates[name]):8.0f} {statistics.median(per_note[name]):7.1f}ms "
            f"{colds.get(name, float('nan')):11.0f}ms"
        )


if __name__ == "__main__":
    main()
