"""How the prompt hook's similarity floor trades found answers against off-topic passages.

Run: .venv/bin/python benchmarks/tune_prompt_floor.py DATASET_DIR... [--max 3]

Each dataset is loaded as `contextd eval` loads it (the configured model, default local). For
every query the top hits are taken as the prompt hook takes them (up to --max, each at or
above the floor), and for each floor we print: the share of answerable queries with a relevant
record among them, the mean number of irrelevant passages shown per query, and, for queries
marked adversarial (no answer in the store), the share that get any passage at all.
"""

import argparse
import tempfile
from pathlib import Path

import _one_shot  # noqa: F401  (one BLAS thread, as the CLI runs)

from contextd.app import open_app
from contextd.config import load_settings
from contextd.evaluation import Evaluator, load_dataset
from contextd.models import SearchQuery

FLOORS = [0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55]


def measure(folder: Path, shown_max: int) -> list[tuple[bool, bool, list[tuple[float, bool]]]]:
    """Per query: (answerable, adversarial, [(similarity, relevant) of the top hits])."""
    corpus, queries = load_dataset(folder)
    rows = []
    with tempfile.TemporaryDirectory() as home, open_app(load_settings(home=home)) as app:
        evaluator = Evaluator(app.projects, app.writer, app.search)
        back = {rid: item for item, rid in evaluator.ingest(corpus, None).items()}
        for query in queries:
            project = app.projects.ensure(query.project)
            result = app.search.search(project, SearchQuery(text=query.query, limit=shown_max * 3))
            top = [
                (hit.similarity, back.get(hit.record.id) in query.relevant)
                for hit in result.hits
                if not hit.linked_from
            ]
            adversarial = query.category == "adversarial"
            rows.append((bool(query.relevant) and not adversarial, adversarial, top))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--max", type=int, default=3)
    args = parser.parse_args()
    for folder in args.datasets:
        rows = measure(folder, args.max)
        answerable = [top for ok, _, top in rows if ok]
        adversarial = [top for _, adv, top in rows if adv]
        print(f"\n{folder.name}: {len(answerable)} answerable, {len(adversarial)} adversarial")
        print("floor  found@max  off-topic/query  adversarial-any")
        for floor in FLOORS:
            kept = [[hit for hit in top if hit[0] >= floor][: args.max] for top in answerable]
            found = sum(any(rel for _, rel in hits) for hits in kept) / max(len(kept), 1)
            noise = sum(sum(not rel for _, rel in hits) for hits in kept) / max(len(kept), 1)
            fooled = sum(any(s >= floor for s, _ in top[: args.max]) for top in adversarial)
            share = fooled / len(adversarial) if adversarial else float("nan")
            print(f"{floor:5.2f}  {found:9.3f}  {noise:15.2f}  {share:15.3f}")


if __name__ == "__main__":
    main()
