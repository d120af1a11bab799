"""How much a meaning arm that reads the whole record would gain, and what it would cost (issue 45).

The local model reads 128 word pieces of a record today (one vector from its start). Here each
record is also cut into windows of W words overlapping by O, each window led by the record's
headline, every window embedded, and a record scored by its best window (the cosine of its
nearest window to the query). Printed for each (W, O): the meaning arm's hit@1, hit@5 and MRR
over the dataset's queries (each ranked among its project's records, as the arm ranks them),
and the embedding cost: windows per record and CPU seconds per record.

    python benchmarks/chunking.py benchmarks/data/rfc-dev [--windows 60,90,150] [--overlaps 0,20]
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

import _one_shot  # noqa: F401  (one BLAS thread, as the CLI runs)
import numpy as np

from contextd.config import EmbeddingSettings
from contextd.embeddings import select_provider
from contextd.evaluation import load_dataset
from contextd.markdown import headline


def windows(text: str, size: int, overlap: int) -> list[str]:
    """The record's words in windows of `size` overlapping by `overlap`, each led by its
    headline (the first window is the record's start)."""
    words = text.split()
    head = headline(text)
    step = max(size - overlap, 1)
    out = []
    for start in range(0, max(len(words), 1), step):
        part = " ".join(words[start : start + size])
        out.append(part if start == 0 else f"{head}\n{part}")
        if start + size >= len(words):
            break
    return out


def scores(ranked: dict[str, list[str]], relevant: dict[str, set[str]]) -> tuple[float, ...]:
    hit1 = hit5 = rr = 0.0
    for query, order in ranked.items():
        found = [i for i, rid in enumerate(order[:10]) if rid in relevant[query]]
        hit1 += bool(found and found[0] == 0)
        hit5 += bool(found and found[0] < 5)
        rr += 1 / (found[0] + 1) if found else 0.0
    n = max(len(ranked), 1)
    return hit1 / n, hit5 / n, rr / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--windows", default="60,90,150")
    parser.add_argument("--overlaps", default="0,20")
    args = parser.parse_args()
    corpus, queries = load_dataset(args.dataset)
    model = select_provider(EmbeddingSettings(provider="local")).provider
    assert model is not None
    by_project: dict[str, list[str]] = defaultdict(list)
    texts = {item.id: item.text for item in corpus}
    for item in corpus:
        by_project[item.project].append(item.id)
    asked = {q.id: np.asarray(model.embed_query(q.query)) for q in queries}
    relevant = {q.id: set(q.relevant) for q in queries}
    project_of = {q.id: q.project for q in queries}
    print("window overlap  windows/record  cpu_s/record  hit@1  hit@5    mrr")
    plans = [(0, 0)] + [
        (int(w), int(o))
        for w in args.windows.split(",")
        for o in args.overlaps.split(",")
        if int(o) < int(w)
    ]
    for size, overlap in plans:
        started = time.process_time()
        best: dict[str, np.ndarray] = {}
        count = 0
        for rid, text in texts.items():
            parts = [text] if size == 0 else windows(text, size, overlap)
            count += len(parts)
            best[rid] = np.asarray(model.embed_documents(parts))
        cpu = (time.process_time() - started) / max(len(texts), 1)
        ranked = {}
        for qid, vector in asked.items():
            ids = by_project[project_of[qid]]
            cosine = {rid: float(np.max(best[rid] @ vector)) for rid in ids}
            ranked[qid] = sorted(ids, key=lambda rid: -cosine[rid])
        hit1, hit5, mrr = scores(ranked, relevant)
        label = "start" if size == 0 else f"{size:6d} {overlap:7d}"
        print(
            f"{label:>14}  {count / len(texts):14.1f}  {cpu:12.3f}  {hit1:5.3f}  {hit5:5.3f}  "
            f"{mrr:5.3f}"
        )


if __name__ == "__main__":
    main()
