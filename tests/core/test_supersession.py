"""Supersession carries links to the successor, and a superseded fact cannot come back as
another kind of record."""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from contextd.app import App
from contextd.errors import DuplicateError
from contextd.models import (
    ConstraintBody,
    DecisionBody,
    Hardness,
    Kind,
    Record,
    RecordDraft,
    SearchQuery,
)
from tests.conftest import DECISION, POSTGRES, Cli

pytestmark = pytest.mark.usefixtures("repo")

RULE = [
    "constrain",
    "Queue workers must ack a task only after its handler commits",
    "--reason",
    "Acking before the commit loses the task whenever a worker crashes mid-handler",
    "--hardness",
    "strong",
    "--scope",
    "src/queue/**",
]


def _superseded_with_a_linked_rule(run: Cli) -> tuple[dict, dict, dict]:
    old = run.json(*DECISION)
    rule = run.json(*RULE, "--related", old["id"])
    new = run.json(*POSTGRES)
    run.json("supersede", old["id"], "--by", new["id"])
    return old, rule, new


def test_supersede_points_every_link_to_the_old_record_at_its_successor(run: Cli) -> None:
    old, rule, new = _superseded_with_a_linked_rule(run)
    moved = run.json("show", rule["id"])
    assert moved["related_to"] == [new["id"]]
    assert moved["updated_at"] > rule["updated_at"]  # a change: sync and share carry it


def test_recall_by_path_reaches_the_successor_through_the_link(run: Cli) -> None:
    old, rule, new = _superseded_with_a_linked_rule(run)
    found = run.json("recall", "crashes mid-handler", "--path", "src/queue/worker.py")
    ids = [hit["id"] for hit in found["results"]]
    assert rule["id"] in ids and new["id"] in ids and old["id"] not in ids
    assert "linked from" in found["context"]


def test_decide_supersedes_moves_the_links_too(run: Cli) -> None:
    old = run.json(*DECISION)
    rule = run.json(*RULE, "--related", old["id"])
    new = run.json(*POSTGRES, "--supersedes", old["id"])
    assert run.json("show", rule["id"])["related_to"] == [new["id"]]


def test_a_link_left_on_a_superseded_record_still_reaches_the_current_one(
    app: App, home: Path
) -> None:
    """A link written before links followed supersession (or by an older machine, synced
    in) is followed along the chain at recall."""
    old, rule, new = _store_rule_and_decisions(app)
    with sqlite3.connect(home / "contextd.db") as conn:  # as an older version left it
        conn.execute(
            "UPDATE records SET related_to = ? WHERE id = ?", (json.dumps([old.id]), rule.id)
        )
    hits = app.search.search(
        app.current_project(), SearchQuery("handler crashes mid-handler", limit=1)
    ).hits
    linked = {h.record.id: h.linked_from for h in hits}
    assert linked.get(new.id) == rule.id and old.id not in linked


def _decision(args: list[str]) -> RecordDraft:
    return RecordDraft(kind=Kind.DECISION, title=args[1], body=DecisionBody(args[3], args[5]))


def _store_rule_and_decisions(app: App) -> tuple[Record, Record, Record]:
    project = app.current_project()
    old = app.writer.create(_decision(DECISION), project)
    rule = app.writer.create(
        RecordDraft(
            kind=Kind.CONSTRAINT,
            title=RULE[1],
            body=ConstraintBody(RULE[3], Hardness.STRONG, ("src/queue/**",)),
            related_to=(old.id,),
        ),
        project,
    )
    new = app.writer.create(_decision(POSTGRES), project, supersedes=[old.id])
    return old, rule, new


@pytest.mark.parametrize(
    "args",
    [
        ["add", "Use NATS for the task queue", "--category", "architecture"],
        [
            "constrain",
            "Use NATS for the task queue",
            "--reason",
            "Every worker and the coordinator speak the JetStream protocol today",
            "--hardness",
            "strong",
        ],
    ],
    ids=["memory", "constraint"],
)
def test_a_superseded_decision_cannot_come_back_as_another_kind(run: Cli, args: list[str]) -> None:
    old = run.json(*DECISION)
    new = run.json(*POSTGRES, "--supersedes", old["id"])
    result = run(*args)
    assert result.exit_code == 4, result.output
    assert f"repeats decision {old['id']}" in result.stderr
    assert new["id"] in result.stderr and "moved away" in result.stderr
    kinds = [r["kind"] for r in run.json("memories")["records"]]
    assert kinds == ["decision"]  # only the current decision: nothing was stored
    forced = run.json(*args, "--force")
    assert forced["status"] == "active"


def test_the_refusal_names_the_end_of_the_chain(run: Cli) -> None:
    first = run.json(*DECISION)
    second = run.json(*POSTGRES, "--supersedes", first["id"])
    third = run.json(
        "decide",
        "Use SQS for the task queue",
        "--problem",
        "Running the queue ourselves costs an on-call rotation nobody wants to staff",
        "--why",
        "SQS is managed, scales without tuning and its visibility timeout redelivers "
        "tasks a crashed worker held",
        "--supersedes",
        second["id"],
    )
    result = run("add", "use nats for the task queue", "--category", "architecture")
    assert result.exit_code == 4
    assert third["id"] in result.stderr and "Use SQS" in result.stderr


def test_an_active_record_of_another_kind_with_the_same_title_is_not_refused(run: Cli) -> None:
    """Only what the team moved away from is guarded across kinds: a memory may share an
    active decision's title (the similar-records report shows it)."""
    run.json(*DECISION)
    stored = run.json("add", "Use NATS for the task queue", "--category", "architecture")
    assert stored["kind"] == "memory"


def test_the_core_refuses_it_for_every_surface(app: App) -> None:
    project = app.current_project()
    old = app.writer.create(_decision(DECISION), project)
    app.writer.create(_decision(POSTGRES), project, supersedes=[old.id])
    draft = RecordDraft(
        kind=Kind.CONSTRAINT,
        title=DECISION[1],
        body=ConstraintBody(RULE[3], Hardness.ADVISORY),
    )
    with pytest.raises(DuplicateError, match="superseded"):
        app.writer.record(draft, project)


def test_the_cli_in_a_real_process_moves_links(repo: Path) -> None:
    def contextd(*args: str) -> dict:
        done = subprocess.run(
            [sys.executable, "-m", "contextd", *args, "--json"],
            capture_output=True,
            text=True,
            encoding="utf-8",
            cwd=repo,
            env=os.environ,
            check=True,
        )
        return json.loads(done.stdout)

    old = contextd(*DECISION)
    rule = contextd(*RULE, "--related", old["id"])
    new = contextd(*POSTGRES)
    contextd("supersede", old["id"], "--by", new["id"])
    assert contextd("show", rule["id"])["related_to"] == [new["id"]]
