"""`refresh`: duplicates listed, merged into the older record only when confirmed, records that
differ in meaning never merged, similar ones reported, each step counted; `quality` lists the
duplicates first."""

import os
import pty
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tests.storage.helpers import fts_rowids, seq_of

QUEUE = "The task queue retries a failed job three times before it is dead-lettered"
QUEUE_AGAIN = "The task queue retries a failed job three times before it gets dead-lettered"
OTHER = "Invoices are rounded to two decimals before they are stored in billing"


def _add(run: Cli, text: str, *extra: str, category: str = "gotcha") -> dict[str, Any]:
    return run.json("add", text, "--category", category, "--force", *extra)


def _steps(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {step["step"]: step for step in report["steps"]}


def _tombstoned(home: Path, record_id: str) -> bool:
    with closing(sqlite3.connect(home / "contextd.db")) as conn:
        row = conn.execute("SELECT 1 FROM tombstones WHERE id = ?", (record_id,)).fetchone()
    return row is not None


@pytest.mark.usefixtures("repo")
def test_exact_and_near_duplicates_merge_into_the_older_record(run: Cli, home: Path) -> None:
    older = _add(run, QUEUE, "--tag", "queue")
    same = _add(run, QUEUE, "--tag", "retries", "--hint", "dead letter queue")
    near = _add(run, QUEUE_AGAIN, "--tag", "queue", "--priority", "5")
    other = _add(run, OTHER)
    pointing = _add(run, "Dead letters are replayed by hand", "--related", same["id"])
    retired = _add(run, "Failed jobs are retried forever")
    assert run("supersede", retired["id"], "--by", same["id"]).exit_code == 0

    report = run.json("refresh", "--yes")

    steps = _steps(report)
    assert steps["duplicates"]["merged"] == 2 and steps["duplicates"]["into"] == 1
    assert [m["kept"] for m in report["merged"]] == [older["id"]]
    assert {t["id"] for t in report["merged"][0]["twins"]} == {same["id"], near["id"]}
    kept = run.json("show", older["id"])
    assert kept["tags"] == ["queue", "retries"] and kept["priority"] == 5
    assert kept["retrieval_hints"] == ["dead letter queue"]
    assert run.json("show", pointing["id"])["related_to"] == [older["id"]]
    assert run.json("show", retired["id"])["superseded_by"] == older["id"]
    for gone in (same["id"], near["id"]):
        assert run("show", gone).exit_code != 0
        assert _tombstoned(home, gone)
    listed = {r["id"] for r in run.json("memories")["records"]}
    assert {older["id"], other["id"], pointing["id"]} <= listed
    assert not {same["id"], near["id"]} & listed
    assert _steps(run.json("refresh", "--yes"))["duplicates"]["merged"] == 0  # none left


@pytest.mark.usefixtures("repo")
def test_a_dry_run_says_what_it_would_do_and_changes_nothing(run: Cli) -> None:
    _add(run, QUEUE)
    twin = _add(run, QUEUE)
    report = run.json("refresh", "--dry-run")
    assert report["dry_run"] is True
    steps = _steps(report)
    assert steps["duplicates"]["to_merge"] == 1 and steps["duplicates"]["merged"] == 0
    assert set(steps) == {"words", "embeddings", "duplicates", "similar", "index", "tombstones"}
    assert all(step["summary"] for step in report["steps"])
    assert run("show", twin["id"]).exit_code == 0
    text = run("refresh", "--dry-run").stdout
    assert text.startswith("Dry run: nothing was changed.")
    assert "would merge 1 duplicate into 1 record" in text


@pytest.mark.usefixtures("repo")
def test_records_an_older_version_indexed_are_indexed_again(run: Cli, home: Path) -> None:
    made = _add(run, "Re-platforming the billing service onto Kubernetes")
    with closing(sqlite3.connect(home / "contextd.db")) as conn, conn:  # as 0.x indexed it
        conn.execute("UPDATE records SET body_text = category WHERE id = ?", (made["id"],))

    def found() -> list[int]:
        return fts_rowids(home / "contextd.db", "replatforming")

    assert found() == []
    assert _steps(run.json("refresh", "--dry-run"))["words"]["to_index"] == 1
    assert found() == []

    assert _steps(run.json("refresh"))["words"]["indexed"] == 1

    assert found() == [seq_of(home / "contextd.db", made["id"])]
    assert _steps(run.json("refresh"))["words"]["indexed"] == 0


@pytest.mark.usefixtures("repo")
def test_records_of_another_kind_or_status_are_not_merged(run: Cli) -> None:
    memory = _add(run, QUEUE)
    archived = _add(run, QUEUE)
    run.json("archive", archived["id"])
    report = run.json("refresh", "--yes")
    assert report["merged"] == []
    assert run.json("show", memory["id"])["status"] == "active"
    assert run.json("show", archived["id"])["status"] == "archived"


@pytest.mark.usefixtures("repo")
def test_similar_records_are_reported_in_clusters_not_merged(run: Cli) -> None:
    first = _add(run, QUEUE)
    second = _add(run, "The task queue retries a failed job twice and then it is dead-lettered")
    report = run.json("refresh", "--yes")
    assert report["merged"] == []
    clustered = [{r["id"] for r in c["records"]} for c in report["clusters"]]
    assert {first["id"], second["id"]} in clustered
    assert _steps(report)["similar"]["clusters"] == len(report["clusters"])


@pytest.mark.usefixtures("repo")
def test_quality_lists_a_duplicate_with_the_command_that_merges_it(run: Cli) -> None:
    older = _add(run, QUEUE)
    twin = _add(run, QUEUE)
    issues = run.json("quality")["issues"]
    found = [i for i in issues if i["kind"] == "duplicate"]
    assert [i["id"] for i in found] == [twin["id"]]
    assert older["id"] in found[0]["detail"] and "contextd refresh --yes" in found[0]["fix"]
    run.json("refresh", "--yes")
    assert not [i for i in run.json("quality")["issues"] if i["kind"] == "duplicate"]


@pytest.mark.usefixtures("repo")
def test_without_yes_refresh_lists_the_duplicates_rebuilds_the_index_and_merges_nothing(
    run: Cli,
) -> None:
    older = _add(run, QUEUE)
    near = _add(run, QUEUE_AGAIN)
    report = run.json("refresh")
    steps = _steps(report)
    assert steps["duplicates"]["to_merge"] == 1 and steps["duplicates"]["merged"] == 0
    assert "not merged" in steps["duplicates"]["summary"]
    assert report["merged"] == []
    [listed] = report["duplicates"]
    assert listed["kept"] == older["id"]
    [twin] = listed["twins"]
    assert twin["id"] == near["id"] and twin["similarity"] >= 0.9
    assert 0.9 <= twin["text_similarity"] < 1
    assert steps["index"]["vectors"] == 2  # the index was rebuilt all the same
    assert run("show", near["id"]).exit_code == 0
    text = run("refresh").stdout
    assert f"keep {older['id'][:13]}" in text and f"<- {near['id'][:13]}" in text
    assert "Nothing was merged: `contextd refresh --yes` merges" in text
    assert run("show", near["id"]).exit_code == 0


RULE = "Never let import-worker call metrics-agent"


@pytest.mark.usefixtures("repo", "local_model")  # it puts a reversed rule at cosine 0.97
def test_records_that_differ_in_meaning_are_never_merged_however_close_their_vectors(
    run: Cli,
) -> None:
    rule = _add(run, RULE, category="convention")
    differing = [
        _add(run, text, category="convention")
        for text in (
            "Always let import-worker call metrics-agent",  # the negation reversed
            "Never let metrics-agent call import-worker",  # the roles reversed
            "Retry a failed import 3 times",
            "Retry a failed import 5 times",  # another number
        )
    ]
    restated = _add(run, RULE + ".", category="convention")
    report = run.json("refresh", "--yes")
    assert [(m["kept"], [t["id"] for t in m["twins"]]) for m in report["merged"]] == [
        (rule["id"], [restated["id"]])
    ]
    for record in differing:
        assert run("show", record["id"]).exit_code == 0
    clustered = [{r["id"] for r in c["records"]} for c in report["clusters"]]
    assert any({rule["id"], differing[0]["id"], differing[1]["id"]} <= c for c in clustered)
    assert {differing[2]["id"], differing[3]["id"]} in clustered


def refresh_in_a_terminal(cwd: Path, answer: bytes, *extra: str) -> tuple[int, str]:
    """Run `contextd refresh` with a real pseudo-terminal as stdin and answer its question."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "contextd", "refresh", *extra],
        cwd=cwd,
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ.copy(),
    )
    os.close(follower)
    try:
        time.sleep(0.1)  # not a timing assertion: the answer is read whenever it is asked
        os.write(leader, answer)
        out, err = process.communicate(timeout=60)
    finally:
        os.close(leader)
    return process.returncode, out.decode() + err.decode()


def test_a_person_is_shown_the_duplicates_and_asked_in_a_terminal(repo: Path, run: Cli) -> None:
    older = _add(run, QUEUE)
    near = _add(run, QUEUE_AGAIN)
    code, output = refresh_in_a_terminal(repo, b"n\n")
    assert code == 0, output
    listing = output.index(f"<- {near['id'][:13]}")
    assert output.index(f"keep {older['id'][:13]}") < listing < output.index("Merge these 1")
    assert "Nothing was merged" in output and "rebuilt the" in output
    assert run("show", near["id"]).exit_code == 0
    code, output = refresh_in_a_terminal(repo, b"y\n")
    assert code == 0, output
    assert "merged 1 duplicate into 1 older record" in output
    assert run("show", near["id"]).exit_code != 0


@pytest.mark.usefixtures("repo")
def test_the_refresh_status_suggests_brings_the_index_up_to_date_and_merges_nothing(
    run: Cli,
) -> None:
    assert run("config", "set", "embeddings.provider", "none").exit_code == 0
    _add(run, QUEUE)
    twin = _add(run, QUEUE_AGAIN)
    assert run("config", "set", "embeddings.provider", "hashing").exit_code == 0
    suggested = run.json("status")["index"]["fix"]
    assert suggested == "contextd refresh"
    report = run.json(*suggested.split()[1:])
    assert report["embedded"] == 2 and report["index"]["embedded"] == 2
    assert report["merged"] == [] and run("show", twin["id"]).exit_code == 0
    assert run.json("status")["index"]["fix"] is None
