"""contextd quality: each kind of issue found, with the command that fixes it."""

import sqlite3
from pathlib import Path

import pytest

from tests.conftest import DECISION, Cli

pytestmark = pytest.mark.usefixtures("repo")


def test_a_clean_store_has_no_issues(run: Cli) -> None:
    first = run.json(*DECISION, "--tag", "queue")
    run.json(
        "add",
        "Workers ack only after the handler commits its transaction",
        "--category",
        "convention",
        "--tag",
        "queue",
        "--related",
        first["id"],
    )
    assert run.json("quality") == {"counts": {}, "issues": []}
    assert "No quality issues" in run("quality").stdout


def test_each_issue_comes_with_its_fix(run: Cli, home: Path) -> None:
    thin = run.json(*DECISION, "--tag", "queue")
    lonely = run.json(
        "add",
        "Workers ack only after the handler commits its transaction",
        "--category",
        "convention",
        "--tag",
        "queue",
    )
    untagged = run.json(
        "add", "Builds need Node 20 or newer on every runner", "--category", "gotcha"
    )
    with sqlite3.connect(home / "contextd.db") as conn:  # an old record from before the rules
        conn.execute(
            "UPDATE records SET body = json_set(body, '$.why_chosen', 'faster') WHERE id = ?",
            (thin["id"],),
        )
        conn.execute(
            "UPDATE records SET verified_at = '2020-01-01T00:00:00.000Z' WHERE id = ?",
            (untagged["id"],),
        )
    report = run.json("quality")
    found = {(i["kind"], i["id"]): i["fix"] for i in report["issues"]}
    # Each fix names the record by its handle, as the person types it.
    assert found[("thin_rationale", thin["id"])].startswith("contextd update D1 --why")
    assert found[("missing_tags", untagged["id"])] == "contextd update M2 --tag TAG"
    assert found[("stale", untagged["id"])].startswith("contextd verify M2")
    assert ("isolated", lonely["id"]) in found and ("isolated", thin["id"]) in found
    assert report["counts"] == {"thin_rationale": 1, "missing_tags": 1, "stale": 1, "isolated": 2}
