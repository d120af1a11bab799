"""Ingest speed of long records: records/s through the bulk write path, by model read length.

Run: .venv/bin/python benchmarks/bench_ingest.py [COUNT] [MAX_TOKENS ...]

Real ADRs (benchmarks/data/adr-dev) of at least 1,500 characters, cut at 2,000, are stored
with `RecordWriter.create_many` (what `contextd eval` and a bulk load use: one embedding batch,
the duplicate guard's neighbour search for each record, one transaction) into a fresh store
with the local model, once per `embeddings.max_tokens` given (default: 256, then 128, back to
back). The model is loaded and warmed before the clock starts.

Prints, per setting, records/s of wall time and of CPU time (process CPU over both cores: on
a machine shared with other work the wall figure drops, the CPU figure much less), and the
ratio of each setting's CPU time to the first's.
"""

import json
import sys
import tempfile
import time
from pathlib import Path

import _one_shot  # noqa: F401  (one BLAS thread, as the CLI runs)
from msgspec.structs import replace

from contextd.app import open_app
from contextd.config import load_settings
from contextd.models import Kind, MemoryBody, Origin, RecordDraft

CORPUS = Path(__file__).parent / "data" / "adr-dev" / "corpus.jsonl"
LENGTH = 2000


def texts(count: int) -> list[str]:
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    long = [json.loads(line)["text"][:LENGTH] for line in lines]
    return [t for t in long if len(t) >= 1500][:count]


def ingest(records: list[str], max_tokens: int) -> tuple[float, float]:
    """Wall and CPU seconds to store `records` with the model reading `max_tokens`."""
    with tempfile.TemporaryDirectory() as home:
        settings = load_settings(home=home)
        embeddings = replace(settings.embeddings, provider="local", max_tokens=max_tokens)
        with open_app(replace(settings, embeddings=embeddings)) as app:
            assert app.indexer is not None
            app.indexer.provider.warm()
            app.indexer.provider.embed_documents(records[:16])  # the graph, the kernels
            project = app.projects.ensure("bench")
            drafts = [
                RecordDraft(Kind.MEMORY, text, MemoryBody(), category="adr", origin=Origin.IMPORT)
                for text in records
            ]
            wall, cpu = time.perf_counter(), time.process_time()
            app.writer.create_many(drafts, project, short_title_ok=True)
            return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 120
    lengths = [int(a) for a in sys.argv[2:]] or [256, 128]
    records = texts(count)
    mean = sum(map(len, records)) / len(records)
    print(f"{len(records)} records of {mean:.0f} characters on average")
    first_cpu = None
    for max_tokens in lengths:
        wall, cpu = ingest(records, max_tokens)
        first_cpu = first_cpu or cpu
        print(
            f"max_tokens {max_tokens:>3}: {len(records) / wall:5.1f} records/s wall, "
            f"{2 * len(records) / cpu:5.1f} records/s of two cores' CPU "
            f"({cpu:.1f} s CPU, {first_cpu / cpu:.2f}x the first)"
        )


if __name__ == "__main__":
    main()
