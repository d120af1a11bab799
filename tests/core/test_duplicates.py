"""Restatements are refused (superseded and archived ones included), similar records reported."""

import json
from pathlib import Path

import pytest

from tests.conftest import DECISION, Cli, make_repo

NATS = "GPU scheduler uses NATS JetStream for task transport between coordinator and workers"
POSTGRES = [
    "decide",
    "Use PostgreSQL SKIP LOCKED for the task queue",
    "--problem",
    "We want a durable task queue without running one more service in production",
    "--why",
    "Postgres is already deployed and SKIP LOCKED gives safe concurrent dequeue "
    "inside transactions we already trust",
]

pytestmark = pytest.mark.usefixtures("repo")


def test_the_same_text_again_is_refused_naming_the_record_and_what_to_do(run: Cli) -> None:
    first = run.json("add", NATS, "--category", "architecture")
    again = run("add", NATS.upper(), "--category", "architecture")
    assert again.exit_code == 4
    assert first["id"] in again.stderr
    for command in ("contextd update", "contextd verify", "contextd supersede", "--force"):
        assert command in again.stderr
    assert len(run.json("memories")["records"]) == 1


def test_force_stores_a_restatement_anyway(run: Cli) -> None:
    run.json("add", NATS, "--category", "architecture")
    forced = run.json("add", NATS, "--category", "architecture", "--force")
    assert len(run.json("memories")["records"]) == 2
    assert forced["similar"] and forced["similar"][0]["similarity"] > 0.99


def test_a_near_identical_wording_is_refused_by_meaning(run: Cli) -> None:
    run.json("add", NATS, "--category", "architecture")
    reworded = NATS.replace("between", "among")
    result = run("add", reworded, "--category", "architecture", "--json")
    assert result.exit_code == 4
    assert json.loads(result.stdout)["error"]["type"] == "DuplicateError"
    assert "% the same as" in result.stderr


def test_restating_a_superseded_decision_says_the_team_moved_away(run: Cli) -> None:
    old = run.json(*DECISION)
    new = run.json(*POSTGRES)
    run.json("supersede", old["id"], "--by", new["id"])
    result = run(*DECISION)
    assert result.exit_code == 4
    assert "superseded on" in result.stderr and new["id"] in result.stderr
    assert "moved away" in result.stderr


def test_restating_an_archived_record_points_at_unarchive(run: Cli) -> None:
    record = run.json("add", NATS, "--category", "architecture")
    run.json("archive", record["id"])
    result = run("add", NATS, "--category", "architecture")
    assert result.exit_code == 4
    assert f"contextd unarchive {record['id']}" in result.stderr


def test_a_similar_record_is_reported_and_the_write_proceeds(run: Cli) -> None:
    first = run.json("add", NATS, "--category", "architecture")
    second = run.json(
        "add",
        "The GPU scheduler uses NATS JetStream to move tasks between coordinator and workers",
        "--category",
        "architecture",
    )
    assert [s["id"] for s in second["similar"]] == [first["id"]]
    assert 0.65 <= second["similar"][0]["similarity"] < 0.9
    text = run(
        "add",
        "GPU scheduler uses Redis streams for task transport between coordinator and workers",
        "--category",
        "architecture",
    ).stdout
    assert "Similar records" in text


def test_an_update_that_restates_another_record_is_refused_unless_forced(run: Cli) -> None:
    first = run.json("add", NATS, "--category", "architecture")
    other = run.json(
        "add", "Builds need Node 20 or newer on every CI runner", "--category", "gotcha"
    )
    refused = run("update", other["id"], "--title", NATS)
    assert refused.exit_code == 4 and first["id"] in refused.stderr
    assert run.json("show", other["id"])["title"].startswith("Builds")
    assert run.json("update", other["id"], "--title", NATS, "--force")["title"] == NATS


def test_another_projects_record_is_no_duplicate(
    run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run.json("add", NATS, "--category", "architecture")
    monkeypatch.chdir(make_repo(tmp_path / "sable"))
    run.json("attach")
    assert run.json("add", NATS, "--category", "architecture")["similar"] == []
