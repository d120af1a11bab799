"""Learn the relevance floor under which search, recall and the prompt hook say nothing (issue 45).

For each dataset the store is loaded with the local model and every query asked, plus every
off-topic prompt of benchmarks/data/off-topic/prompts.txt in each of its projects. Of each
answer the best hit's cosine and the full-text arm's coverage (the idf-weighted share of the
query's words its best match holds) are kept. A floor (cosine c, coverage v) lets an answer
speak when its best hit's cosine reaches c or its coverage reaches v. Printed: for each floor,
the share of off-topic prompts kept silent and the share of answerable queries whose relevant
record was in the top 5 and still is (speaks).

    python benchmarks/tune_silence.py DATASET... [--check DATASET...] [--json OUT]

The development sets choose the floor; the --check sets are only reported. The stores are
asked with the floor itself off, so that it hides nothing it is measured on. The cosine kept
is that of the nearest record's start, as the floor reads it: a long record's nearest window
is near most queries by chance (see contextd.retrieval.semantic).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import _one_shot  # noqa: F401  (one BLAS thread, as the CLI runs)
from msgspec.structs import replace

from contextd.app import App, open_app, scratch_settings
from contextd.config import load_settings
from contextd.evaluation import Evaluator, load_dataset
from contextd.models import SearchQuery
from contextd.storage.filters import RecordFilter
from contextd.storage.fts import lexical_matches

OFF_TOPIC = Path(__file__).parent / "data" / "off-topic" / "prompts.txt"
COSINES = [round(0.20 + 0.02 * i, 3) for i in range(11)]
COVERAGES = [round(0.5 + 0.05 * i, 2) for i in range(11)]


@dataclass
class Answer:
    dataset: str
    answerable: bool
    found: bool  # an answerable query's relevant record is in the top 5
    cosine: float  # the best hit's start's
    coverage: float


def answers(dataset: Path, home: str) -> list[Answer]:
    corpus, queries = load_dataset(dataset)
    prompts = [
        line.strip()
        for line in OFF_TOPIC.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    settings = load_settings(home=home)
    settings = replace(
        settings,
        embeddings=replace(settings.embeddings, provider="local"),
        search=replace(settings.search, relevance_floor=False),
    )
    out = []
    with scratch_settings(settings) as scratch:
        with open_app(scratch) as app:
            mapping = Evaluator(app.projects, app.writer, app.search).ingest(corpus, None)
        asked = [(q.project, q.query, {mapping.get(r) for r in q.relevant}) for q in queries]
        projects = sorted({item.project for item in corpus})
        asked += [(project, prompt, set()) for project in projects for prompt in prompts]
        with open_app(scratch) as app:
            out += [_answer(app, dataset.name, *item) for item in asked]
    return out


def _answer(app: App, dataset: str, name: str, text: str, relevant: set[str | None]) -> Answer:
    project = app.projects.ensure(name)
    hits = app.search.search(project, SearchQuery(text=text, limit=10)).hits
    coverage = lexical_matches(app.db.connection(), text, RecordFilter(project.id), 50).coverage
    top5 = {h.record.id for h in hits[:5]}
    assert app.indexer is not None and app.vector_index is not None
    vector = app.indexer.provider.embed_query(text)
    # A superseded match counts for the record it hands its match to, as in search.
    ids = [h.record.id for h in hits] + [h.via for h in hits if h.via]
    starts = app.vector_index.similarity(vector, ids, starts_only=True)
    best = max(starts.values(), default=0.0)
    return Answer(dataset, bool(relevant), bool(relevant & top5), best, coverage)


def table(rows: list[Answer], label: str) -> None:
    off = [a for a in rows if not a.answerable]
    found = [a for a in rows if a.found]
    print(f"\n{label}: {len(found)} answerable found in the top 5, {len(off)} off-topic")
    print("cosine  coverage  silent  kept")
    for c in COSINES:
        for v in COVERAGES:
            silent = sum(not _speaks(a, c, v) for a in off) / max(len(off), 1)
            kept = sum(_speaks(a, c, v) for a in found) / max(len(found), 1)
            if silent >= 0.8:
                print(f"{c:6.3f}  {v:8.2f}  {silent:6.3f}  {kept:5.3f}")


def _speaks(answer: Answer, cosine: float, coverage: float) -> bool:
    return answer.cosine >= cosine or answer.coverage >= coverage


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--check", nargs="*", type=Path, default=[])
    parser.add_argument("--home", default=str(Path.home() / ".contextd"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    dev = [a for d in args.datasets for a in answers(d, args.home)]
    check = [a for d in args.check for a in answers(d, args.home)]
    table(dev, "development sets")
    if check:
        table(check, "check sets")
    if args.json:
        args.json.write_text(json.dumps([asdict(a) for a in dev + check]), encoding="utf-8")


if __name__ == "__main__":
    main()
