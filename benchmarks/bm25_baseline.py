"""Plain BM25 over an eval dataset (the reference baseline of /work/shared/eval/README.md).

Tokens are lowercased runs of letters and digits, no stemming, no stop words; k1 = 1.2, b = 0.75;
each query is scoped to its project; every record is ranked, superseded or not (BM25 knows no
supersession, so a superseded record in the top 5 counts as stale; `--current-only` leaves the
superseded records out of the index, the same text contextd's full-text arm ranks by default).
Scored with the same `score_ranking` as `contextd eval`.

    python benchmarks/bm25_baseline.py benchmarks/data/adr-dev [--current-only] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
from collections import Counter, defaultdict
from pathlib import Path

from contextd.evaluation import METRICS, RankedItem, load_dataset, score_ranking

TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


class Bm25:
    def __init__(self, docs: dict[str, str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tf = {doc: Counter(tokens(text)) for doc, text in docs.items()}
        self.length = {doc: sum(tf.values()) for doc, tf in self.tf.items()}
        self.avg = statistics.fmean(self.length.values()) if self.length else 0.0
        df: Counter[str] = Counter()
        for tf in self.tf.values():
            df.update(tf.keys())
        n = len(self.tf)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def rank(self, query: str, limit: int = 10) -> list[str]:
        terms = set(tokens(query))
        scores: dict[str, float] = {}
        for doc, tf in self.tf.items():
            norm = self.k1 * (1 - self.b + self.b * self.length[doc] / self.avg)
            score = sum(
                self.idf[t] * tf[t] * (self.k1 + 1) / (tf[t] + norm) for t in terms if t in tf
            )
            if score > 0:
                scores[doc] = score
        return sorted(scores, key=lambda d: (-scores[d], d))[:limit]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--current-only", action="store_true", help="index no superseded record")
    args = parser.parse_args()
    corpus, queries = load_dataset(args.folder)
    old = {o for item in corpus for o in item.supersedes} if args.current_only else set()
    by_project: dict[str, dict[str, str]] = defaultdict(dict)
    for item in corpus:
        if item.id in old:
            continue
        by_project[item.project][item.id] = item.text
    indexes = {project: Bm25(docs) for project, docs in by_project.items()}
    rows: dict[str, list[dict[str, float]]] = defaultdict(list)
    for query in queries:
        ranked = indexes[query.project].rank(query.query)
        row = score_ranking(query, [RankedItem(i, query.project, True) for i in ranked])
        rows["overall"].append(row)
        rows[query.category].append(row)
    report = {
        name: {m: round(statistics.fmean(r[m] for r in group), 4) for m in METRICS}
        | {"n": len(group)}
        for name, group in rows.items()
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{'':<12}" + "".join(f"{m:>10}" for m in (*METRICS, "n")))
    for name, values in report.items():
        print(
            f"{name:<12}" + "".join(f"{values[m]:>10.3f}" for m in METRICS) + f"{values['n']:>10}"
        )


if __name__ == "__main__":
    main()
