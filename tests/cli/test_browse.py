"""show, memories, search and status through the CLI."""

import subprocess
from pathlib import Path

import pytest

from tests.conftest import DECISION, Cli, make_repo


@pytest.mark.usefixtures("repo")
def test_search_ranks_by_relevance_and_reports_scores(run: Cli) -> None:
    nats = run.json(*DECISION, "--tag", "queue")
    run.json("add", "The docs site is built with mkdocs material", "--category", "convention")
    hint = run.json(
        "add",
        "Workers must be idempotent",
        "--category",
        "gotcha",
        "--hint",
        "duplicate task delivery",
    )
    results = run.json("search", "task queue")["results"]
    assert results[0]["id"] == nats["id"]
    assert set(results[0]) >= {"id", "kind", "title", "status", "score"}
    # The gotcha matches "task" by its hint alone, a word most of these records hold: it
    # comes after, worth next to nothing, but it is a match.
    assert results[0]["score"] > 0 and all(r["score"] >= 0 for r in results)
    assert [r["title"] for r in results[1:]] == ["Workers must be idempotent"]
    assert run.json("search", "duplicate delivery")["results"][0]["id"] == hint["id"]


@pytest.mark.usefixtures("repo")
def test_search_filters_by_kind_tag_and_limit(run: Cli) -> None:
    decision = run.json(*DECISION, "--tag", "queue")
    memory = run.json("add", "The task queue runs on three nodes", "--category", "architecture")
    assert [r["id"] for r in run.json("search", "queue", "--kind", "memory")["results"]] == [
        memory["id"]
    ]
    assert [r["id"] for r in run.json("search", "queue", "--tag", "queue")["results"]] == [
        decision["id"]
    ]
    assert len(run.json("search", "queue", "--limit", "1")["results"]) == 1


@pytest.mark.usefixtures("repo")
@pytest.mark.parametrize("query", ['"', "NEAR(", "*", "-", "OR", "a AND NOT (b", "col:val", "^x"])
def test_search_takes_fts_syntax_as_plain_words(run: Cli, query: str) -> None:
    run.json(*DECISION)
    result = run("search", query, "--json")
    assert result.exit_code in (0, 2)
    assert "Traceback" not in result.output
    if result.exit_code == 2:
        assert "no words" in result.stderr


@pytest.mark.usefixtures("repo")
def test_search_explain_prints_each_term(run: Cli) -> None:
    run.json(*DECISION)
    hit = run.json("search", "queue", "--explain")["results"][0]
    assert set(hit["explain"]) == {
        "fts",
        "semantic",
        "feedback",
        "priority",
        "recency",
        "project_match",
        "trust",
        "status_multiplier",
    }
    assert "fts" in run("search", "queue", "--explain").stdout


def test_search_never_returns_another_projects_records(
    run: Cli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = run.json(*DECISION)
    other = make_repo(tmp_path / "sable")
    monkeypatch.chdir(other)
    run.json("attach")
    theirs = run.json(*DECISION)
    shared = run.json(
        "add", "Queue names use kebab-case everywhere", "--category", "convention", "--global"
    )
    monkeypatch.chdir(repo)
    found = {r["id"] for r in run.json("search", "queue", "--limit", "50")["results"]}
    assert mine["id"] in found and shared["id"] in found and theirs["id"] not in found
    listed = {r["id"] for r in run.json("memories", "--all")["records"]}
    assert theirs["id"] not in listed


@pytest.mark.usefixtures("repo")
def test_memories_lists_newest_first_and_filters_by_kind(run: Cli) -> None:
    first = run.json("add", "The build needs Node 20 or newer", "--category", "gotcha")
    second = run.json(*DECISION)
    assert [r["id"] for r in run.json("memories")["records"]] == [second["id"], first["id"]]
    assert [r["id"] for r in run.json("memories", "--kind", "decision")["records"]] == [
        second["id"]
    ]
    text = run("memories").stdout
    assert "gotcha" in text and "decision" in text


@pytest.mark.usefixtures("repo")
def test_show_prints_every_field_for_people(run: Cli) -> None:
    record = run.json(
        "pipeline",
        "Release",
        "--purpose",
        "Ship a tagged build safely to prod",
        "--step",
        "run tests",
        "--step",
        "tag",
        "--tag",
        "deploy",
    )
    text = run("show", record["id"]).stdout
    for expected in (
        "Release",
        "Purpose: Ship a tagged build",
        "1. run tests",
        "2. tag",
        "tags deploy",
        record["id"],
    ):
        assert expected in text


def test_status_shows_git_counts_and_the_last_checkpoint(run: Cli, repo: Path) -> None:
    (repo / "a.txt").write_text("a", encoding="utf-8")
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    subprocess.run(["git", "add", "a.txt"], cwd=repo, check=True)
    subprocess.run(
        ["git", "commit", "-qm", "first"],
        cwd=repo,
        check=True,
        env={**__import__("os").environ, **env},
    )
    (repo / "b.txt").write_text("b", encoding="utf-8")
    run.json(*DECISION)
    run.json(
        "checkpoint",
        "worker heartbeat completed",
        "--goal",
        "Distributed GPU scheduling",
        "--next",
        "Lease-based GPU allocation",
    )
    out = run.json("status")
    assert out["project"]["name"] == "orbit"
    assert out["git"]["dirty"] == 1 and len(out["git"]["commit"]) >= 7
    assert out["counts"]["decision"] == 1 and out["counts"]["checkpoint"] == 1
    assert out["goal"] == "Distributed GPU scheduling"
    assert out["next"] == ["Lease-based GPU allocation"]
    assert out["index"]["backend"] == "sqlite (exact numpy scan)"
    text = run("status").stdout
    for expected in (
        "Branch",
        "(1 dirty)",
        "Decisions",
        "worker heartbeat completed",
        "Current goal",
        "- Lease-based GPU allocation",
        "Vectors      sqlite (exact numpy scan)",
    ):
        assert expected in text


def test_a_query_longer_than_the_limit_is_one_sentence(run: Cli, repo: Path) -> None:
    result = run("search", "queue " * 400)
    assert result.exit_code == 2 and "the limit is 2000" in result.stderr
    assert "Traceback" not in result.output


def test_a_home_that_is_a_file_is_one_sentence(
    run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    afile = tmp_path / "not-a-home"
    afile.write_text("x", encoding="utf-8")
    monkeypatch.setenv("CONTEXTD_HOME", str(afile))
    result = run("memories")
    assert result.exit_code == 5 and "is a file, not a folder" in result.stderr
    assert "Note:" not in result.output
