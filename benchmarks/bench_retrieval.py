"""Retrieval benchmark: ingest rate, warm recall latency, cold `contextd search` (without and
with a running daemon), peak RSS.

Run: .venv/bin/python benchmarks/bench_retrieval.py [--sizes 1000,10000,100000]

Stores of N synthetic records are built in a temporary home. Ingest is timed through the
normal write path with the configured model on `--ingest` records; the larger stores get
their vectors written directly (random unit vectors tagged with the model's id), because
embedding 100k records would take an hour and the scan's cost does not depend on the values.
Queries are embedded by the real model. Numbers are medians over repeated runs.
"""

import argparse
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _one_shot  # noqa: F401  (one BLAS thread, as the CLI runs)

from contextd.app import App, open_app
from contextd.clock import now
from contextd.config import load_settings
from contextd.models import Kind, MemoryBody, Project, Record, RecordDraft, SearchQuery
from contextd.retrieval.indexer import embedding_text, vector_hash
from contextd.storage import vectors

WORDS = (
    "queue worker deploy schema migration token cache latency retry index shard "
    "postgres redis nats kafka billing invoice ledger auth session cookie header "
    "webhook cron backup restore replica failover lint format test fixture mock "
    "container kubernetes helm terraform budget alert metric trace log span"
).split()
QUERIES = [
    "why did we move the task queue off redis",
    "how are database migrations applied",
    "what breaks when a worker restarts",
    "where do auth tokens get validated",
    "which service owns invoice numbering",
    "how do we roll back a bad deploy",
]


CPU: dict[str, float] = {}  # the same measures in this process's CPU time: steadier when
# the machine is shared, since waiting for a core is left out


def _vocabulary(size: int = 6000) -> list[str]:
    rng = random.Random(1)
    letters = "abcdefghijklmnopqrstuvwxyz"
    made = {"".join(rng.choice(letters) for _ in range(rng.randint(3, 10))) for _ in range(size)}
    return WORDS + sorted(made)


VOCABULARY = _vocabulary()
# Zipf-like weights: a few words are everywhere, most are rare, as in real notes.
WEIGHTS = [1.0 / (rank + 1) for rank in range(len(VOCABULARY))]


def sentence(rng: random.Random) -> str:
    words = rng.choices(VOCABULARY, weights=WEIGHTS, k=rng.randint(8, 24))
    return " ".join(words).capitalize() + "."


def build(home: Path, size: int, ingest: int, rng: random.Random) -> tuple[float, str]:
    """Create a store of `size` records; returns (ingest records/s, provider id)."""
    settings = load_settings(home=home)
    with open_app(settings) as app:
        project = app.projects.ensure("bench")
        real = min(ingest, size)
        if app.indexer is not None:  # the model loads before the clock starts, as an ingest
            # loads it (by a first batch: one-thread calls side by side, see embeddings.local)
            app.indexer.provider.embed_documents([sentence(rng) for _ in range(16)])
        drafts = [
            RecordDraft(Kind.MEMORY, sentence(rng), MemoryBody(), category="note")
            for _ in range(real)
        ]
        started, cpu = time.perf_counter(), time.process_time()
        app.writer.create_many(drafts, project)
        rate = real / (time.perf_counter() - started)
        CPU["ingest/s"] = real / (time.process_time() - cpu)
        rest = [
            RecordDraft(Kind.MEMORY, sentence(rng), MemoryBody(), category="note")
            for _ in range(size - real)
        ]
        provider = app.indexer.provider if app.indexer else None
        if rest:
            records = (
                app.writer.create_many(rest, project)
                if provider is None
                else _create_without_model(app, rest, project)
            )
            del records
        return rate, provider.id if provider else "none"


def _create_without_model(app: App, drafts: list[RecordDraft], project: Project) -> list[Record]:
    import numpy as np  # after contextd, which picks the BLAS thread count before numpy loads

    indexer, app.writer._indexer = app.writer._indexer, None
    assert indexer is not None  # called only when the store has a model
    try:
        records = app.writer.create_many(drafts, project)
    finally:
        app.writer._indexer = indexer
    provider = indexer.provider
    rng = np.random.default_rng(7)
    with app.db.transaction() as conn:
        for start in range(0, len(records), 1000):
            chunk = records[start : start + 1000]
            matrix = rng.standard_normal((len(chunk), provider.dimensions)).astype(np.float32)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            vectors.upsert_embeddings(
                conn,
                [
                    vectors.EmbeddingRow(r.id, provider.id, vector_hash(embedding_text(r)), list(v))
                    for r, v in zip(chunk, matrix, strict=True)
                ],
                now(),
            )
    return records


def warm_recall(home: Path, rounds: int) -> tuple[float, float]:
    with open_app(load_settings(home=home)) as app:
        project = app.projects.ensure("bench")
        app.index.warm()  # as a resident process (the daemon, the MCP server) loads it
        app.search.recall(project, SearchQuery(text="warm up the model and matrix"))
        times, cpu = [], []
        for i in range(rounds):
            started, used = time.perf_counter(), time.process_time()
            # Unique text per round: the model's query cache must not flatter the numbers.
            text = f"{QUERIES[i % len(QUERIES)]} round {i}"
            app.search.recall(project, SearchQuery(text=text))
            times.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - used) * 1000)
    CPU["recall p50 ms"] = statistics.median(cpu)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def with_daemon(home: Path, rounds: int) -> float:
    """cold_search while a daemon serves the home (started and stopped here)."""
    exe = str(Path(sys.executable).parent / "contextd")
    subprocess.run([exe, "--home", str(home), "daemon", "start"], check=True, capture_output=True)
    try:
        return cold_search(home, rounds, "daemon")
    finally:
        subprocess.run(
            [exe, "--home", str(home), "daemon", "stop"], check=True, capture_output=True
        )


def cold_search(home: Path, rounds: int, label: str = "cold") -> float:
    exe = str(Path(sys.executable).parent / "contextd")
    times, cpu = [], []
    for i in range(rounds):
        started = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [
                exe,
                "--home",
                str(home),
                "--project",
                "bench",
                "search",
                QUERIES[i % len(QUERIES)],
                "--json",
            ],
            check=True,
            capture_output=True,
        )
        times.append((time.perf_counter() - started) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        used = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        cpu.append(used * 1000)
    CPU[f"{label} ms"] = statistics.median(cpu)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--ingest", type=int, default=1000, help="records embedded for real")
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--precision", default="", help="embeddings.precision (fp32, int8)")
    args = parser.parse_args()
    rng = random.Random(42)
    header = ("records", "ingest/s", "recall p50", "p95", "cold search", "via daemon")
    print("{:>8} {:>9} {:>11} {:>7} {:>12} {:>11}  provider".format(*header))
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as scratch:
            home = Path(scratch)
            if args.precision:
                config = f'[embeddings]\nprecision = "{args.precision}"\n'
                (home / "config.toml").write_text(config, encoding="utf-8")
            rate, provider = build(home, size, args.ingest, rng)
            p50, p95 = warm_recall(home, args.rounds)
            cold = cold_search(home, 7)
            served = with_daemon(home, 7)
            print(
                f"{size:>8} {rate:>9.0f} {p50:>9.1f}ms {p95:>5.1f}ms {cold:>10.0f}ms "
                f"{served:>9.0f}ms  {provider}"
                f"  (CPU time: {CPU['ingest/s']:.0f} records/s, p50 {CPU['recall p50 ms']:.1f} ms, "
                f"cold {CPU['cold ms']:.0f} ms, client via daemon {CPU['daemon ms']:.0f} ms)",
                flush=True,
            )
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process: {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
