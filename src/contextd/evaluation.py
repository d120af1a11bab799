"""`contextd eval`: load a retrieval dataset into a scratch store and score the recall path.

Dataset format: `corpus.jsonl` ({id, project, kind, category?, text, created_at?, supersedes?})
and `queries.jsonl` ({id, project, query, relevant, superseded?, category?}).
"""

import json
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from contextd.core.recall.queries import SearchService
from contextd.core.workspace.projects import ProjectService
from contextd.core.writing.validation import validate_draft
from contextd.core.writing.writer import RecordWriter
from contextd.errors import InvalidInputError, ValidationError
from contextd.models import Kind, MemoryBody, Origin, Project, RecordDraft, SearchQuery, Status

__all__ = ["EvalQuery", "EvalReport", "Evaluator", "load_dataset", "score_ranking", "summarise"]

METRICS = ("hit@1", "hit@5", "recall@5", "recall@10", "mrr", "stale@5", "leak@5")


class CorpusItem(Struct, frozen=True):
    id: str
    project: str
    kind: str
    category: str | None
    text: str
    created_at: str | None
    supersedes: tuple[str, ...]


class EvalQuery(Struct, frozen=True):
    id: str
    project: str
    query: str
    relevant: tuple[str, ...]
    superseded: tuple[str, ...] = ()
    category: str = "all"


class RankedItem(Struct, frozen=True):
    """One returned result, in dataset terms."""

    id: str
    project: str
    current: bool  # False when shown as NOT CURRENT


class EvalReport(Struct):
    overall: dict[str, float]
    by_category: dict[str, dict[str, float]]
    index_build_s: float
    config: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "overall": self.overall,
            "by_category": self.by_category,
            "index_build_s": round(self.index_build_s, 3),
            "config": self.config,
            "notes": self.notes,
        }


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    try:
                        yield number, json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise InvalidInputError(
                            f"{path}:{number} is not valid JSON ({exc.msg})."
                        ) from None
    except FileNotFoundError:
        raise InvalidInputError(
            f"{path} is missing; a dataset folder holds corpus.jsonl and queries.jsonl."
        ) from None


def load_dataset(folder: Path) -> tuple[list[CorpusItem], list[EvalQuery]]:
    """Read and check both files; a malformed line is one clear error naming it."""
    corpus, queries = [], []
    try:
        for number, row in _lines(folder / "corpus.jsonl"):
            where = f"{folder / 'corpus.jsonl'}:{number}"
            corpus.append(
                CorpusItem(
                    id=str(row["id"]),
                    project=str(row["project"]),
                    kind=str(row.get("kind", "memory")),
                    category=row.get("category"),
                    text=str(row["text"]),
                    created_at=row.get("created_at"),
                    supersedes=_ids(row.get("supersedes") or [], "supersedes", where),
                )
            )
        for number, row in _lines(folder / "queries.jsonl"):
            where = f"{folder / 'queries.jsonl'}:{number}"
            queries.append(
                EvalQuery(
                    id=str(row["id"]),
                    project=str(row["project"]),
                    query=str(row["query"]),
                    relevant=_ids(row["relevant"], "relevant", where),
                    superseded=_ids(row.get("superseded") or [], "superseded", where),
                    category=str(row.get("category") or "all"),
                )
            )
    except (KeyError, TypeError) as exc:
        raise InvalidInputError(f"{where} lacks a required field ({exc}).") from None
    if not corpus or not queries:
        raise InvalidInputError(f"{folder} holds no records or no queries.")
    return corpus, queries


def _ids(value: object, name: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidInputError(f"{where}: {name} must be a list of ids.")
    return tuple(value)


def score_ranking(query: EvalQuery, ranked: list[RankedItem]) -> dict[str, float]:
    """Every metric of one query from its ranked results."""
    ids = [item.id for item in ranked]
    relevant = set(query.relevant)
    first = next((rank for rank, rid in enumerate(ids, 1) if rid in relevant), None)

    def share(k: int) -> float:
        return len(relevant & set(ids[:k])) / len(relevant) if relevant else 0.0

    top5 = ranked[:5]
    return {
        "hit@1": float(first == 1),
        "hit@5": float(first is not None and first <= 5),
        "recall@5": share(5),
        "recall@10": share(10),
        "mrr": 1.0 / first if first else 0.0,
        "stale@5": float(any(i.id in query.superseded and i.current for i in top5)),
        "leak@5": float(any(i.project != query.project for i in top5)),
    }


def summarise(rows: list[dict[str, float]]) -> dict[str, float]:
    out = {name: round(statistics.fmean(r[name] for r in rows), 4) for name in METRICS}
    latencies = sorted(r["latency_ms"] for r in rows)
    out["p50_ms"] = round(_percentile(latencies, 0.50), 2)
    out["p95_ms"] = round(_percentile(latencies, 0.95), 2)
    out["n"] = len(rows)
    return out


def _percentile(sorted_values: list[float], fraction: float) -> float:
    if not sorted_values:
        return 0.0
    index = min(len(sorted_values) - 1, max(0, round(fraction * (len(sorted_values) - 1))))
    return sorted_values[index]


class Evaluator:
    """Loads a dataset through the normal write path, then runs every query through recall."""

    def __init__(
        self, projects: ProjectService, writer: RecordWriter, search: SearchService
    ) -> None:
        self._projects = projects
        self._writer = writer
        self._search = search
        self.refused: list[str] = []  # corpus ids the write path refused (e.g. a secret)

    def run(
        self,
        corpus: list[CorpusItem],
        queries: list[EvalQuery],
        progress: Callable[[str, int, int], None] | None = None,
    ) -> EvalReport:
        started = time.perf_counter()
        mapping = self.ingest(corpus, progress)
        build_s = time.perf_counter() - started
        report = self.score(queries, mapping, progress)
        report.index_build_s = build_s
        return report

    def score(
        self,
        queries: list[EvalQuery],
        mapping: dict[str, str],
        progress: Callable[[str, int, int], None] | None = None,
    ) -> EvalReport:
        """Run every query through recall on a loaded store; `mapping` is dataset id -> record
        id, as `ingest` returned it."""
        rows_by_category: dict[str, list[dict[str, float]]] = defaultdict(list)
        for query, row in zip(queries, self.rows(queries, mapping, progress), strict=True):
            rows_by_category[query.category].append(row)
        everything = [row for rows in rows_by_category.values() for row in rows]
        return EvalReport(
            overall=summarise(everything),
            by_category={name: summarise(rows) for name, rows in sorted(rows_by_category.items())},
            index_build_s=0.0,
            notes=[
                "records were loaded as memories with their kind as category; the minimum "
                "text length and the duplicate guard were relaxed for the load so every line "
                "of the dataset is stored",
                *(
                    [
                        f"{len(self.refused)} corpus records were refused by the write path "
                        f"(secrets) and not loaded: {', '.join(self.refused[:10])}"
                    ]
                    if self.refused
                    else []
                ),
            ],
        )

    def rows(
        self,
        queries: list[EvalQuery],
        mapping: dict[str, str],
        progress: Callable[[str, int, int], None] | None = None,
    ) -> list[dict[str, float]]:
        """Each query's metrics and latency, in the order given."""
        back = {record_id: item for item, record_id in mapping.items()}
        projects = {p.id: p for p in self._projects.list_projects()}
        rows = []
        for done, query in enumerate(queries, 1):
            project = self._project(query.project)
            began = time.perf_counter()
            result = self._search.recall(project, SearchQuery(text=query.query, limit=10))
            elapsed = (time.perf_counter() - began) * 1000
            ranked = [
                RankedItem(
                    back.get(h.record.id, h.record.id),
                    projects[h.record.project_id].name
                    if h.record.project_id in projects
                    else query.project,
                    h.record.status is Status.ACTIVE,
                )
                for h in result.hits
                if not h.linked_from
            ]
            row = score_ranking(query, ranked)
            row["latency_ms"] = elapsed
            rows.append(row)
            if progress:
                progress("queries", done, len(queries))
        return rows

    def _storable(
        self, items: list[CorpusItem], drafts: list[RecordDraft]
    ) -> tuple[list[CorpusItem], list[RecordDraft]]:
        """Leave out (and note) what the write path refuses, so one line cannot stop a run."""
        kept: list[tuple[CorpusItem, RecordDraft]] = []
        for item, draft in zip(items, drafts, strict=True):
            try:
                validate_draft(draft, short_title_ok=True)
            except ValidationError:
                self.refused.append(item.id)
                continue
            kept.append((item, draft))
        return [k[0] for k in kept], [k[1] for k in kept]

    def _project(self, name: str) -> Project:
        return self._projects.ensure(name)

    def ingest(
        self, corpus: list[CorpusItem], progress: Callable[[str, int, int], None] | None
    ) -> dict[str, str]:
        """Load the corpus project by project, in file order; returns dataset id -> record id."""
        by_project: dict[str, list[CorpusItem]] = defaultdict(list)
        for item in corpus:
            by_project[item.project].append(item)
        mapping: dict[str, str] = {}
        loaded = 0
        for name, items in by_project.items():
            project = self._project(name)
            drafts = [
                RecordDraft(
                    kind=Kind.MEMORY,
                    title=item.text,
                    body=MemoryBody(),
                    category=_category(item),
                    origin=Origin.IMPORT,
                    created_at=item.created_at,
                )
                for item in items
            ]
            items, drafts = self._storable(items, drafts)

            def tick(count: int) -> None:
                nonlocal loaded
                loaded += count
                if progress:
                    progress("records", loaded, len(corpus))

            records = self._writer.create_many(
                drafts, project, short_title_ok=True, force=True, progress=tick
            )
            mapping.update(
                {item.id: record.id for item, record in zip(items, records, strict=True)}
            )
        for item in corpus:
            for old in item.supersedes:
                if old in mapping:
                    self._writer.supersede(mapping[old], mapping[item.id])
        return mapping


def _category(item: CorpusItem) -> str:
    raw = (item.category or item.kind or "note").lower()
    cleaned = "".join(c if c.isalnum() or c in "-_" else "-" for c in raw).strip("-_")
    return cleaned[:40] if cleaned and cleaned[0].isalpha() else "note"
