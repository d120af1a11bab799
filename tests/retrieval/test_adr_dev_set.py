"""The ADR development set (benchmarks/data/adr-dev) and the script that builds it: stated
supersession is read from the ADRs' own status lines, and every shipped record loads through the
write path (nothing refused, so `contextd eval` scores all of it)."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from contextd.core.writing.validation import validate_draft
from contextd.evaluation import load_dataset
from contextd.models import Kind, MemoryBody, Origin, RecordDraft

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "benchmarks" / "data" / "adr-dev"


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "build_adr_dev", ROOT / "benchmarks" / "build_adr_dev.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["build_adr_dev"] = module
    spec.loader.exec_module(module)
    return module


def test_status_lines_give_the_edges_and_leave_the_body() -> None:
    build = _builder()
    gsp = next(s for s in build.SOURCES if s.project == "gsp")
    tdr = next(s for s in build.SOURCES if s.project == "tdr")
    old = build.parse(
        gsp,
        "docs/architecture/adr/ADR005-ingress.md",
        "# ADR005: Ingress\n\n## Status\n\nSuperseded by [ADR025](ADR025-ingress.md)\n\n"
        '## Decision\n\nOne load balancer.\n\n```json\n{"status": "ok"}\n```\n',
        "2019-01-02",
    )
    assert old.id == "gsp-005" and old.superseded_by == {25} and old.supersedes == set()
    assert "Superseded" not in old.text and '"status": "ok"' in old.text
    assert old.created_at == "2019-01-02"  # no Date: line, so git's date
    new = build.parse(
        tdr,
        "architecture-decision-records/0009-keycloak.md",
        "# 9. Keycloak\n\n**Date:** 2020-13-40\n\nThis decision supersedes decision: "
        "[0008 Keycloak](0008-keycloak.md)\n\n## Decision\n\nUse the TDR realm.\n",
        "2020-06-01",
    )
    assert new.supersedes == {8} and new.superseded_by == set()
    assert new.created_at == "2020-06-01"  # an impossible stated date falls back to git's
    assert new.text == "9. Keycloak\n\n## Decision\n\nUse the TDR realm."


@pytest.mark.skipif(not DATA.is_dir(), reason="the ADR dev set is not in this checkout")
def test_every_record_loads_and_every_answer_is_current() -> None:
    corpus, queries = load_dataset(DATA)
    assert len(corpus) >= 200 and len(queries) >= 150
    position = {item.id: n for n, item in enumerate(corpus)}
    old = {o for item in corpus for o in item.supersedes}
    for item in corpus:
        validate_draft(
            RecordDraft(
                kind=Kind.MEMORY,
                title=item.text,
                body=MemoryBody(),
                category=item.kind,
                origin=Origin.IMPORT,
                created_at=item.created_at,
            ),
            short_title_ok=True,
        )
        assert all(position[o] < position[item.id] for o in item.supersedes)
    for query in queries:
        assert set(query.relevant) <= position.keys() and not set(query.relevant) & old
        assert all(r.startswith(query.project + "-") for r in query.relevant)
    lines = (DATA / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    sources = [json.loads(line)["source"] for line in lines]
    assert sum(1 for s in sources if isinstance(s, dict) and s["url"]) >= 20


@pytest.mark.skipif(not DATA.is_dir(), reason="the ADR dev set is not in this checkout")
def test_bm25_baseline_scores_the_set() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bm25_baseline.py"), str(DATA), "--json"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    report = json.loads(out.stdout)
    assert report["overall"]["n"] == len(load_dataset(DATA)[1])
    assert 0.5 < report["overall"]["mrr"] <= 1.0
