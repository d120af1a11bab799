"""`contextd eval DIR`: a dataset scored in a scratch store, and the metrics it reports."""

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from contextd.errors import InvalidInputError
from contextd.evaluation import (
    EvalQuery,
    RankedItem,
    load_dataset,
    score_ranking,
    summarise,
)
from tests.conftest import Cli

CORPUS = [
    {"id": "c1", "project": "alpha", "kind": "decision", "text": "We deploy with GitHub Actions"},
    {
        "id": "c2",
        "project": "alpha",
        "kind": "fact",
        "text": "Deploys ran on Jenkins nightly builds from the build server",
        "created_at": "2024-01-05T10:00:00Z",
    },
    {
        "id": "c3",
        "project": "alpha",
        "kind": "fact",
        "text": "Deploys now run through GitHub Actions workflows on every merge",
        "supersedes": ["c2"],
    },
    {"id": "c4", "project": "alpha", "kind": "chat", "text": "Hi!"},
    {
        "id": "c5",
        "project": "alpha",
        "kind": "fact",
        "category": "Billing Rules",
        "text": "Invoices are rounded to two decimals in billing",
    },
    {"id": "c6", "project": "beta", "kind": "fact", "text": "Deploys run on Jenkins nightly"},
    {"id": "c7", "project": "beta", "kind": "fact", "text": "Invoices are rounded up in billing"},
    {"id": "c8", "project": "beta", "kind": "chat", "text": "Ok."},
]
QUERIES = [
    {
        "id": "q1",
        "project": "alpha",
        "query": "how do we deploy, Jenkins nightly builds?",
        "relevant": ["c3"],
        "superseded": ["c2"],
        "category": "update",
    },
    {
        "id": "q2",
        "project": "alpha",
        "query": "invoice rounding in billing",
        "relevant": ["c5"],
        "category": "fact",
    },
    {
        "id": "q3",
        "project": "beta",
        "query": "Jenkins nightly deploys",
        "relevant": ["c6"],
        "category": "fact",
    },
    {"id": "q4", "project": "beta", "query": "invoices rounded", "relevant": ["c7"]},
]
METRIC_KEYS = {
    "hit@1",
    "hit@5",
    "recall@5",
    "recall@10",
    "mrr",
    "stale@5",
    "leak@5",
    "p50_ms",
    "p95_ms",
    "n",
}


def _write(folder: Path, name: str, rows: list[Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(
        "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows),
        encoding="utf-8",
    )
    return path


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    folder = tmp_path / "dataset"
    _write(folder, "corpus.jsonl", CORPUS)
    _write(folder, "queries.jsonl", QUERIES)
    return folder


def _records_in_home(home: Path) -> int:
    db = home / "contextd.db"
    if not db.exists():
        return 0
    with closing(sqlite3.connect(db)) as conn:
        return int(conn.execute("SELECT count(*) FROM records").fetchone()[0])


def test_eval_reports_overall_and_per_category_metrics(run: Cli, dataset: Path) -> None:
    report = run.json("eval", str(dataset))
    assert {"overall", "by_category", "index_build_s", "config"} <= set(report)
    assert set(report["overall"]) == METRIC_KEYS
    assert report["overall"]["n"] == 4
    assert set(report["by_category"]) == {"update", "fact", "all"}
    assert report["by_category"]["fact"]["n"] == 2
    assert report["by_category"]["update"]["n"] == 1
    for values in (report["overall"], *report["by_category"].values()):
        assert set(values) == METRIC_KEYS
        for name in ("hit@1", "hit@5", "recall@5", "recall@10", "mrr", "stale@5", "leak@5"):
            assert 0.0 <= values[name] <= 1.0
        assert 0.0 <= values["p50_ms"] <= values["p95_ms"]
    assert report["index_build_s"] >= 0
    assert report["config"]["dataset"] == str(dataset)
    assert report["config"]["embeddings"].startswith("hashing")


def test_eval_finds_the_easy_answers_and_never_shows_stale_or_leaked_records(
    run: Cli, dataset: Path
) -> None:
    overall = run.json("eval", str(dataset))["overall"]
    assert overall["stale@5"] == 0
    assert overall["leak@5"] == 0
    assert overall["hit@5"] == 1.0
    assert overall["recall@10"] == 1.0
    assert overall["mrr"] > 0.5


def test_eval_hands_a_question_about_an_old_fact_to_its_replacement(
    run: Cli, dataset: Path
) -> None:
    update = run.json("eval", str(dataset))["by_category"]["update"]
    assert update["hit@1"] == 1.0
    assert update["stale@5"] == 0


def test_eval_leaves_the_users_own_store_untouched(
    run: Cli, dataset: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    before = _records_in_home(home)
    run.json("eval", str(dataset))
    assert _records_in_home(home) == before == 0
    for name in ("alpha", "beta"):
        listed = run("memories", "--project", name)
        assert listed.exit_code == 3, listed.output


def test_eval_in_text_mode_prints_a_table_with_every_metric(run: Cli, dataset: Path) -> None:
    result = run("eval", str(dataset))
    assert result.exit_code == 0, result.output
    header = result.stdout.splitlines()[0].split()
    assert header == [
        "hit@1",
        "hit@5",
        "recall@5",
        "recall@10",
        "mrr",
        "stale@5",
        "leak@5",
        "p50_ms",
        "p95_ms",
        "n",
    ]
    assert any(line.startswith("overall") for line in result.stdout.splitlines())
    assert "index build" in result.stdout


def test_eval_without_queries_file_is_a_one_line_error(run: Cli, tmp_path: Path) -> None:
    folder = tmp_path / "dataset"
    _write(folder, "corpus.jsonl", CORPUS)
    result = run("eval", str(folder))
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "queries.jsonl" in lines[0] and "missing" in lines[0]


def test_eval_of_a_folder_that_does_not_exist_is_a_usage_error(run: Cli, tmp_path: Path) -> None:
    result = run("eval", str(tmp_path / "nowhere"))
    assert result.exit_code == 2
    assert "Traceback" not in result.output


def test_eval_names_the_file_and_line_of_malformed_json(run: Cli, tmp_path: Path) -> None:
    folder = tmp_path / "dataset"
    corpus = _write(folder, "corpus.jsonl", [*map(json.dumps, CORPUS[:2]), "{not json", "x"])
    _write(folder, "queries.jsonl", QUERIES)
    result = run("eval", str(folder))
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"{corpus}:3" in lines[0]
    assert "not valid JSON" in lines[0]


def test_eval_names_the_line_of_a_query_without_its_question(run: Cli, tmp_path: Path) -> None:
    folder = tmp_path / "dataset"
    _write(folder, "corpus.jsonl", CORPUS)
    lacking = {"id": "q9", "project": "alpha", "relevant": ["c1"]}
    queries = _write(folder, "queries.jsonl", [QUERIES[0], "", lacking])
    result = run("eval", str(folder), "--json")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"{queries}:3" in lines[0]
    assert "query" in lines[0]
    assert json.loads(result.stdout)["error"]["type"] == "InvalidInputError"


def test_eval_refuses_a_relevant_field_that_is_not_a_list(run: Cli, tmp_path: Path) -> None:
    """A "relevant" string such as "c5" is malformed: read as characters it never matches."""
    folder = tmp_path / "dataset"
    _write(folder, "corpus.jsonl", CORPUS)
    queries = _write(folder, "queries.jsonl", [{**QUERIES[1], "relevant": "c5"}])
    result = run("eval", str(folder))
    assert result.exit_code == 2
    assert f"{queries}:1" in result.stderr
    assert "relevant" in result.stderr


def test_load_dataset_refuses_an_empty_queries_file(tmp_path: Path) -> None:
    folder = tmp_path / "dataset"
    _write(folder, "corpus.jsonl", CORPUS)
    _write(folder, "queries.jsonl", [])
    with pytest.raises(InvalidInputError, match="no records or no queries"):
        load_dataset(folder)


def test_load_dataset_reads_optional_fields_with_defaults(dataset: Path) -> None:
    corpus, queries = load_dataset(dataset)
    assert [c.id for c in corpus] == [row["id"] for row in CORPUS]
    assert corpus[2].supersedes == ("c2",)
    assert corpus[0].supersedes == ()
    assert corpus[1].created_at == "2024-01-05T10:00:00Z"
    assert queries[0].superseded == ("c2",)
    assert queries[3].category == "all"
    assert queries[3].superseded == ()


# --- score_ranking on hand-made rankings ---------------------------------------------------


def _query(relevant: tuple[str, ...], superseded: tuple[str, ...] = ()) -> EvalQuery:
    return EvalQuery("q", "alpha", "text", relevant, superseded)


def _ranked(*ids: str, project: str = "alpha") -> list[RankedItem]:
    return [RankedItem(rid, project, True) for rid in ids]


def test_a_relevant_record_first_scores_full_marks() -> None:
    scores = score_ranking(_query(("a",)), _ranked("a", "x", "y"))
    assert scores == {
        "hit@1": 1.0,
        "hit@5": 1.0,
        "recall@5": 1.0,
        "recall@10": 1.0,
        "mrr": 1.0,
        "stale@5": 0.0,
        "leak@5": 0.0,
    }


def test_hit_recall_and_mrr_follow_the_first_relevant_rank() -> None:
    ranked = _ranked("x1", "a", "x2", "x3", "x4", "x5", "b", "x6")
    scores = score_ranking(_query(("a", "b")), ranked)
    assert scores["hit@1"] == 0.0
    assert scores["hit@5"] == 1.0
    assert scores["recall@5"] == 0.5
    assert scores["recall@10"] == 1.0
    assert scores["mrr"] == 0.5


def test_a_relevant_record_below_rank_five_misses_hit_at_five() -> None:
    ranked = _ranked("x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "a")
    scores = score_ranking(_query(("a",)), ranked)
    assert scores["hit@5"] == 0.0
    assert scores["recall@10"] == 0.0
    assert scores["mrr"] == pytest.approx(1 / 11)


def test_nothing_relevant_returned_scores_zero() -> None:
    scores = score_ranking(_query(("a",)), _ranked("x", "y"))
    assert scores["hit@5"] == scores["mrr"] == scores["recall@10"] == 0.0
    assert score_ranking(_query(("a",)), [])["mrr"] == 0.0


def test_stale_counts_a_superseded_record_only_when_shown_as_current() -> None:
    query = _query(("new",), superseded=("old",))
    labelled = [RankedItem("new", "alpha", True), RankedItem("old", "alpha", False)]
    shown_as_current = [RankedItem("new", "alpha", True), RankedItem("old", "alpha", True)]
    assert score_ranking(query, labelled)["stale@5"] == 0.0
    assert score_ranking(query, shown_as_current)["stale@5"] == 1.0


def test_stale_looks_only_at_the_top_five() -> None:
    query = _query(("new",), superseded=("old",))
    ranked = [*_ranked("new", "x1", "x2", "x3", "x4"), RankedItem("old", "alpha", True)]
    assert score_ranking(query, ranked)["stale@5"] == 0.0


def test_leak_counts_a_result_from_another_project_in_the_top_five() -> None:
    query = _query(("a",))
    leaked = [*_ranked("a", "x1"), RankedItem("theirs", "beta", True)]
    late = [*_ranked("a", "x1", "x2", "x3", "x4"), RankedItem("theirs", "beta", True)]
    assert score_ranking(query, leaked)["leak@5"] == 1.0
    assert score_ranking(query, late)["leak@5"] == 0.0
    assert score_ranking(query, _ranked("a", "x1"))["leak@5"] == 0.0


def test_summarise_averages_every_metric_and_reports_latency_percentiles() -> None:
    rows = [
        {**score_ranking(_query(("a",)), _ranked("a")), "latency_ms": 10.0},
        {**score_ranking(_query(("a",)), _ranked("x", "a")), "latency_ms": 30.0},
        {**score_ranking(_query(("a",)), _ranked("x")), "latency_ms": 20.0},
    ]
    summary = summarise(rows)
    assert set(summary) == METRIC_KEYS
    assert summary["n"] == 3
    assert summary["hit@1"] == round(1 / 3, 4)
    assert summary["hit@5"] == round(2 / 3, 4)
    assert summary["mrr"] == 0.5
    assert summary["p50_ms"] == 20.0
    assert summary["p95_ms"] == 30.0


def test_eval_leaves_out_a_line_holding_a_secret_and_says_so(run: Cli, tmp_path: Path) -> None:
    folder = tmp_path / "secret"
    leaky = {"id": "s1", "project": "alpha", "text": "Config: JWT_SECRET=abcd1234efgh5678ijkl"}
    _write(folder, "corpus.jsonl", [*CORPUS, leaky])
    _write(folder, "queries.jsonl", QUERIES)
    report = run.json("eval", str(folder))
    assert report["overall"]["n"] == 4
    assert report["overall"]["hit@5"] == 1.0
    assert any("s1" in note and "secret" in note for note in report["notes"])


@pytest.mark.parametrize("ranking", ["fts", "semantic", "hybrid"])
def test_eval_ranks_by_one_arm_or_both_when_asked(run: Cli, dataset: Path, ranking: str) -> None:
    report = run.json("eval", str(dataset), "--ranking", ranking)
    assert report["config"]["search"]["ranking"] == ranking
    assert report["overall"]["n"] == 4
    assert report["overall"]["stale@5"] == report["overall"]["leak@5"] == 0
    text = run("eval", str(dataset), "--ranking", ranking)
    assert f"ranking {ranking}" in text.stdout


def test_eval_refuses_an_unknown_ranking_in_one_sentence(run: Cli, dataset: Path) -> None:
    result = run("eval", str(dataset), "--ranking", "vibes")
    assert result.exit_code == 2
    assert "Traceback" not in result.output


@pytest.mark.usefixtures("local_model")
def test_eval_scores_the_model_the_home_has_and_says_which(
    run: Cli, dataset: Path, home: Path
) -> None:
    """`contextd init` installs the model into the home; eval's scratch store uses it (it
    looked only for the package) and names it in its text output too."""
    from contextd.embeddings.model_files import INSTALLED_MARK, find_model, home_model_dir

    package = find_model()
    assert package is not None and package.source == "package"
    installed = home_model_dir(home)
    installed.mkdir(parents=True)
    for source in package.folder.iterdir():
        (installed / source.name).symlink_to(source)
    (installed / INSTALLED_MARK).write_text('{"wheel_sha256": "test"}', encoding="utf-8")
    out = run("eval", str(dataset))
    assert out.exit_code == 0, out.output
    assert "embeddings local:all-MiniLM-L6-v2" in out.stdout
    assert f"model in the contextd home ({installed})" in out.stdout
    assert run.json("eval", str(dataset))["config"]["model"].startswith("in the contextd home")
