"""Compare ranking settings on eval datasets, and choose them by cross-validation.

Run: .venv/bin/python benchmarks/tune_fusion.py --cache DIR DATASET... \
        [--set search.KEY=VALUE ...] [--ranking hybrid|fts|semantic] [--categories] \
        [--fusion adaptive|zscore|rrf|relative|saturating|weighted]
     .venv/bin/python benchmarks/tune_fusion.py --cache DIR DATASET... \
        --grid search.KEY=V1,V2,... [--grid ...] [--folds 5]

Each dataset is loaded once into a store under --cache (through the normal write path, as
`contextd eval` does) and its query vectors are kept beside it, so later runs only rank;
the ranking is the real recall path with the settings given.

With --grid, every combination of the values is ranked. With --folds 0 each dataset is held
out in turn: the combination that best keeps up with the better single arm on the other
datasets is scored on it (leave-one-set-out), and each combination's MRR margin over the
better arm is listed per set with its mean and spread. Otherwise the queries of every dataset
are split into folds (a dataset's projects, when it has several, else by query id). For
each fold the combination that best keeps up with the better single arm on the other folds
(the summed shortfall over every dataset and metric, then the summed gain) is chosen and
scored on the held-out fold; the report shows those held-out numbers beside each arm alone,
and the combination chosen on all queries.
"""

import argparse
import itertools
import json
import pickle
import statistics
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import _one_shot  # noqa: F401  (one BLAS thread, as the CLI runs)
import fusion_modes
from msgspec.structs import replace

from contextd.app import open_app
from contextd.config import load_settings, parse_setting
from contextd.evaluation import METRICS, Evaluator, load_dataset

QUALITY = [m for m in METRICS if m not in ("stale@5", "leak@5")]


def _settings(home: Path, pairs: list[str], ranking: str | None) -> Any:
    settings = load_settings(home=home)
    sections: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        key, _, raw = pair.partition("=")
        section, name, value = parse_setting(key, raw)
        sections.setdefault(section, {})[name] = value
    if ranking:
        sections.setdefault("search", {})["ranking"] = ranking
    for section, values in sections.items():
        settings = replace(settings, **{section: replace(getattr(settings, section), **values)})
    return settings


class _QueryVectors:
    """Serves query vectors from (and adds them to) a pickle beside the store."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.cache: dict[str, list[float]] = (
            pickle.loads(path.read_bytes()) if path.exists() else {}
        )
        self.added = False

    def attach(self, app: Any) -> None:
        provider = app.indexer.provider
        embed = provider.embed_query

        def cached(text: str) -> list[float]:
            if text not in self.cache:
                self.cache[text] = embed(text)
                self.added = True
            return list(self.cache[text])

        provider.embed_query = cached

    def save(self) -> None:
        if self.added:
            self.path.write_bytes(pickle.dumps(self.cache))
            self.added = False


class Dataset:
    def __init__(self, folder: Path, cache: Path) -> None:
        self.folder = folder
        self.name = folder.name
        self.corpus, self.queries = load_dataset(folder)
        self.home = cache / folder.name
        self.home.mkdir(parents=True, exist_ok=True)
        self.vectors = _QueryVectors(self.home / "queries.pickle")
        self._mapping: dict[str, str] | None = None

    def rows(self, pairs: list[str], ranking: str | None) -> list[dict[str, float]]:
        """Each query's metrics with these settings."""
        with open_app(_settings(self.home, pairs, ranking)) as app:
            evaluator = Evaluator(app.projects, app.writer, app.search)
            mapping = self._load(evaluator)
            if app.indexer is not None:
                self.vectors.attach(app)
            rows = evaluator.rows(self.queries, mapping)
        self.vectors.save()
        return rows

    def report(self, pairs: list[str], ranking: str | None) -> dict[str, Any]:
        with open_app(_settings(self.home, pairs, ranking)) as app:
            evaluator = Evaluator(app.projects, app.writer, app.search)
            mapping = self._load(evaluator)
            if app.indexer is not None:
                self.vectors.attach(app)
            report = evaluator.score(self.queries, mapping)
        self.vectors.save()
        return report.as_dict()

    def folds(self, count: int) -> list[int]:
        projects = sorted({q.project for q in self.queries})
        if len(projects) >= count:
            at = {p: i % count for i, p in enumerate(projects)}
            return [at[q.project] for q in self.queries]
        return [zlib.crc32(q.id.encode()) % count for q in self.queries]

    def _load(self, evaluator: Evaluator) -> dict[str, str]:
        if self._mapping is None:
            mapping_file = self.home / "mapping.json"
            if not mapping_file.exists():
                started = time.perf_counter()
                mapping = evaluator.ingest(self.corpus, None)
                mapping_file.write_text(json.dumps(mapping), encoding="utf-8")
                took = time.perf_counter() - started
                print(f"  loaded {self.name} in {took:.0f} s", file=sys.stderr)
            self._mapping = json.loads(mapping_file.read_text(encoding="utf-8"))
        return self._mapping


def _mean(rows: list[dict[str, float]], picked: list[int]) -> dict[str, float]:
    return {m: statistics.fmean(rows[i][m] for i in picked) for m in METRICS}


def _shortfall(
    runs: dict[str, list[dict[str, float]]],
    arms: dict[str, tuple[list[dict[str, float]], list[dict[str, float]]]],
    picked: dict[str, list[int]],
) -> tuple[float, float]:
    """How far below the better arm a run falls (summed), then minus how far above it."""
    short = gain = 0.0
    for name, rows in runs.items():
        ours = _mean(rows, picked[name])
        fts, sem = (_mean(arm, picked[name]) for arm in arms[name])
        for metric in QUALITY:
            target = max(fts[metric], sem[metric])
            short += max(0.0, target - ours[metric])
            gain += ours[metric] - target
    return short, -gain


def _leave_one_set_out(
    datasets: list[Dataset],
    combos: list[list[str]],
    runs: list[dict[str, list[dict[str, float]]]],
    arms: dict[str, tuple[list[dict[str, float]], list[dict[str, float]]]],
) -> dict[str, list[dict[str, float]]]:
    """Each set's rows under the combination that did best on the other sets."""
    held = {}
    for d in datasets:
        train = {o.name: list(range(len(o.queries))) for o in datasets if o is not d}
        best = min(
            range(len(combos)),
            key=lambda j: _shortfall({n: r for n, r in runs[j].items() if n in train}, arms, train),
        )
        print(f"without {d.name}: {' '.join(combos[best])}")
        held[d.name] = runs[best][d.name]
    return held


def _margins(
    datasets: list[Dataset],
    combos: list[list[str]],
    runs: list[dict[str, list[dict[str, float]]]],
    arms: dict[str, tuple[list[dict[str, float]], list[dict[str, float]]]],
) -> None:
    """Each combination's MRR minus the better arm's, per set, with mean and spread."""
    print("\nhybrid MRR minus the better arm's, per set (mean and standard deviation across sets)")
    for j, combo in enumerate(combos):
        margins = []
        for d in datasets:
            everything = list(range(len(d.queries)))
            ours = _mean(runs[j][d.name], everything)["mrr"]
            fts, sem = (_mean(arm, everything)["mrr"] for arm in arms[d.name])
            margins.append(ours - max(fts, sem))
        spread = statistics.pstdev(margins) if len(margins) > 1 else 0.0
        cells = " ".join(f"{m:+.3f}" for m in margins)
        mean = statistics.fmean(margins)
        print(f"  {' '.join(combo):60} {cells}  mean {mean:+.3f} sd {spread:.3f}")


def cross_validate(datasets: list[Dataset], grid: list[str], folds: int) -> None:
    axes = []
    for spec in grid:
        key, _, values = spec.partition("=")
        axes.append([f"{key}={value}" for value in values.split(",")])
    combos = [list(c) for c in itertools.product(*axes)]
    print(f"{len(combos)} combinations x {len(datasets)} datasets", file=sys.stderr)
    arms = {d.name: (d.rows([], "fts"), d.rows([], "semantic")) for d in datasets}
    runs = []
    for number, combo in enumerate(combos, 1):
        runs.append({d.name: d.rows(combo, "hybrid") for d in datasets})
        print(f"  {number}/{len(combos)} {' '.join(combo)}", file=sys.stderr)
    held: dict[str, list[dict[str, float]]] = {d.name: [{}] * len(d.queries) for d in datasets}
    if folds == 0:  # leave one set out: each set is scored with what the others chose
        held = _leave_one_set_out(datasets, combos, runs, arms)
    else:
        split = {d.name: d.folds(folds) for d in datasets}
        for fold in range(folds):
            train = {n: [i for i, f in enumerate(s) if f != fold] for n, s in split.items()}
            best = min(range(len(combos)), key=lambda j: _shortfall(runs[j], arms, train))
            print(f"fold {fold}: {' '.join(combos[best])}")
            for name, assigned in split.items():
                for i, f in enumerate(assigned):
                    if f == fold:
                        held[name][i] = runs[best][name][i]
    everything = {d.name: list(range(len(d.queries))) for d in datasets}
    best = min(range(len(combos)), key=lambda j: _shortfall(runs[j], arms, everything))
    print(f"chosen on all queries: {' '.join(combos[best])}")
    _margins(datasets, combos, runs, arms)
    print(f"\n{'held-out':28}" + "".join(f"{m:>10}" for m in QUALITY))
    for d in datasets:
        fts, sem = (_mean(arm, everything[d.name]) for arm in arms[d.name])
        for label, scores in (
            ("hybrid", _mean(held[d.name], everything[d.name])),
            ("fts", fts),
            ("semantic", sem),
        ):
            print(f"{d.name[:18]:18}{label:>10}" + "".join(f"{scores[m]:>10.3f}" for m in QUALITY))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--set", action="append", default=[], dest="pairs")
    parser.add_argument("--ranking", choices=["hybrid", "fts", "semantic"])
    parser.add_argument("--categories", action="store_true")
    parser.add_argument("--grid", action="append", default=[])
    parser.add_argument("--folds", type=int, default=5, help="0: leave one dataset out")
    parser.add_argument(
        "--fusion",
        choices=fusion_modes.NAMES,
        default="adaptive",
        help="rank with one of the fixed fusions adaptive was chosen over",
    )
    args = parser.parse_args()
    fusion_modes.use(args.fusion)
    args.cache.mkdir(parents=True, exist_ok=True)
    datasets = [Dataset(folder, args.cache) for folder in args.datasets]
    if args.grid:
        cross_validate(datasets, args.grid, args.folds)
        return
    print(f"{'':18}" + "".join(f"{m:>10}" for m in METRICS) + f"{'p50_ms':>9}")
    for dataset in datasets:
        report = dataset.report(args.pairs, args.ranking)
        rows = [("overall", report["overall"])]
        if args.categories:
            rows += list(report["by_category"].items())
        for name, values in rows:
            label = dataset.name[:10] + ("" if name == "overall" else f"/{name[:7]}")
            print(
                f"{label:18}"
                + "".join(f"{values[m]:>10.3f}" for m in METRICS)
                + f"{values['p50_ms']:>9.1f}"
            )


if __name__ == "__main__":
    main()
