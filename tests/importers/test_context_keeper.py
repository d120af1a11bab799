"""`contextd import context-keeper`: the real tool's `.context/` JSON, every documented field
mapped, links and lifecycle resolved to the new ids, once."""

import json
from pathlib import Path

import pytest

from contextd.app import App
from contextd.models import (
    ConstraintBody,
    DecisionBody,
    Hardness,
    Kind,
    Origin,
    PipelineBody,
    Status,
)
from tests.conftest import DECISION, Cli
from tests.importers.conftest import CK_019, CK_07, stored


def test_every_documented_field_of_a_decision_arrives(app: App, run: Cli) -> None:
    out = run.json("import", "context-keeper", str(CK_07))
    assert out["counts"] == {
        "entries": 7,
        "imported": 7,
        "proposed": 0,
        "updated": 0,
        "already_stored": 0,
        "refused": 0,
    }
    assert out["written"] is True and "error" not in out
    records = stored(app)
    nats = records["Use NATS JetStream for the task queue"]
    assert nats.kind is Kind.DECISION and nats.origin is Origin.IMPORT
    assert nats.status is Status.ACTIVE
    assert nats.body == DecisionBody(
        problem="Redis pub/sub dropped tasks whenever workers reconnected during a deploy, and "
        "nothing told us a task was lost",
        why_chosen="JetStream keeps durable consumers with explicit acks and replay, so a worker "
        "that reconnects resumes where it stopped and no task is lost",
        alternatives="- Redis streams (rejected: no redelivery without a reaper)\n"
        "- PostgreSQL SKIP LOCKED (rejected: polling load on the DB)",
        what_we_tried="Redis streams with consumer groups: pending entries piled up when a "
        "worker died and needed a hand-written reaper",
        tradeoffs="One more service to run and monitor; the team has to learn JetStream's "
        "consumer settings.\n"
        "Constraints it created: Every worker acks a task only after its side effects commit.",
    )
    assert nats.tags == ("queue", "nats", "architecture")
    assert nats.retrieval_hints == ("tasks lost on deploy", "message broker choice")
    redis = records["Use Redis pub/sub for the task queue"]
    constraint = records["Publish only to NATS subjects under tasks.*"]
    assert nats.related_to == (redis.id, constraint.id)  # dec-001, con-001


def test_a_legacy_rationale_becomes_why_chosen(app: App, run: Cli) -> None:
    run.json("import", "context-keeper", str(CK_07))
    toml = stored(app)["Keep service configuration in TOML files"]
    assert isinstance(toml.body, DecisionBody)
    assert toml.body.why_chosen.startswith("TOML has one obvious way to write a value")


def test_constraints_keep_reason_hardness_scope_and_incident(app: App, run: Cli) -> None:
    run.json("import", "context-keeper", str(CK_07))
    records = stored(app)
    subjects = records["Publish only to NATS subjects under tasks.*"]
    assert subjects.body == ConstraintBody(
        reason="Consumers subscribe to tasks.> alone; a message published elsewhere is "
        "acknowledged by nobody and silently lost",
        hardness=Hardness.ABSOLUTE,
        scope=("**/src/queue/",),  # context-keeper matches a folder scope at any depth
        triggering_incident="March deploy: invoice jobs sent to invoices.render vanished",
    )
    assert subjects.tags == ("queue", "nats", "naming")  # as update_entry left them
    assert subjects.retrieval_hints == ("message never consumed", "subject naming")
    mocks = records["Prefer integration tests against a real NATS server over mocks"]
    assert isinstance(mocks.body, ConstraintBody)
    assert mocks.body.hardness is Hardness.ADVISORY
    assert mocks.body.scope == ()  # `global` names no path


def test_pipelines_keep_their_steps_in_order_with_outputs(app: App, run: Cli) -> None:
    run.json("import", "context-keeper", str(CK_07))
    deploy = stored(app)["Deploy"]
    assert deploy.body == PipelineBody(
        purpose="Ship a release without losing queued tasks: drain consumers before the rollout "
        "and resume them after.\n"
        "When to run it: Any release that touches the workers or the queue configuration.\n"
        "Rules for it: Never skip step 3 while tasks are pending.",
        steps=(
            "Run the test suite against a real NATS server",
            "Build and push the images (produces: image digests)",
            "Pause the JetStream consumers (produces: paused consumers)",
            "Roll out the release, then resume the consumers",
        ),
    )
    assert deploy.tags == ("deploy", "queue")


def test_links_point_at_the_new_ids(app: App, run: Cli) -> None:
    out = run.json("import", "context-keeper", str(CK_07))
    new_id = {i["source_id"]: i["id"] for i in out["imported"]}
    records = {r.id: r for r in stored(app).values()}
    assert records[new_id["con-001"]].related_to == (new_id["dec-002"], new_id["pipe-001"])
    assert records[new_id["pipe-001"]].related_to == (new_id["dec-002"], new_id["con-001"])
    assert records[new_id["con-002"]].related_to == (new_id["dec-002"],)


def test_a_deprecated_decision_is_archived_naming_its_successor(app: App, run: Cli) -> None:
    run.json("import", "context-keeper", str(CK_07))
    records = stored(app)
    redis = records["Use Redis pub/sub for the task queue"]
    nats = records["Use NATS JetStream for the task queue"]
    assert redis.status is Status.ARCHIVED
    assert redis.superseded_by == nats.id
    assert redis.archived_reason == "Replaced by JetStream after tasks were lost on deploys"
    flush = records["Flush Redis before deploy"]
    assert flush.status is Status.ARCHIVED and flush.superseded_by is None
    assert flush.archived_reason == "Redis no longer carries tasks"
    shown = run.json("show", redis.id)
    assert shown["successor"]["id"] == nats.id


def test_a_superseded_decision_is_not_current(app: App, run: Cli) -> None:
    run.json("import", "context-keeper", str(CK_019))
    records = stored(app)
    flask, fastapi = records["Serve the API with Flask"], records["Serve the API with FastAPI"]
    assert flask.status is Status.SUPERSEDED and flask.superseded_by == fastapi.id
    assert fastapi.status is Status.ACTIVE and fastapi.related_to == (flask.id,)
    assert run.json("show", flask.id)["label"] == "NOT CURRENT"
    found = run.json("search", "which framework serves the API")["results"]
    assert [hit["id"] for hit in found if hit["id"] == flask.id] == []
    rule = records["Every endpoint declares its response model"]
    assert isinstance(rule.body, ConstraintBody)
    assert rule.body.reason.endswith("\nEnforced by: tests/test_openapi.py.")
    assert rule.body.scope == ("**/src/api/",)


def test_the_dates_are_the_sources(app: App, run: Cli) -> None:
    run.json("import", "context-keeper", str(CK_07))
    records = stored(app)
    redis = records["Use Redis pub/sub for the task queue"]
    assert redis.created_at == "2026-12-01T15:24:38.631Z"
    assert redis.verified_at == "2026-12-01T15:24:38.631Z"
    assert redis.updated_at == "2026-12-01T15:24:38.680Z"  # when it was deprecated
    subjects = records["Publish only to NATS subjects under tasks.*"]
    assert subjects.created_at == "2026-12-01T15:24:38.656Z"
    assert subjects.verified_at == "2026-12-01T15:24:38.767Z"  # update_entry re-verified it
    mocks = records["Prefer integration tests against a real NATS server over mocks"]
    assert mocks.updated_at == mocks.verified_at == "2026-12-01T15:24:38.698Z"


def test_running_it_again_imports_nothing(app: App, run: Cli) -> None:
    first = run.json("import", "context-keeper", str(CK_07))
    second = run.json("import", "context-keeper", str(CK_07))
    assert second["counts"]["imported"] == 0 and second["written"] is False
    assert second["counts"]["already_stored"] == 7
    assert {a["id"] for a in second["already_stored"]} == {i["id"] for i in first["imported"]}
    assert len(stored(app)) == 7


def test_a_dry_run_reports_and_writes_nothing(app: App, run: Cli) -> None:
    result = run("import", "context-keeper", str(CK_07), "--dry-run")
    assert result.exit_code == 0, result.output
    assert "Would import 7 of 7 context-keeper entries" in result.stdout
    assert "Dry run: nothing was written." in result.stdout
    assert stored(app) == {}
    assert run.json("import", "context-keeper", str(CK_07))["counts"]["imported"] == 7


def test_the_context_folder_itself_can_be_given(app: App, run: Cli) -> None:
    out = run.json("import", "context-keeper", str(CK_07 / ".context"))
    assert out["counts"]["imported"] == 7


def test_a_record_stored_by_hand_counts_as_already_stored_and_takes_the_links(
    app: App, run: Cli, ck_copy: Path
) -> None:
    mine = run.json(*DECISION)["id"]  # "Use NATS for the task queue", restating dec-002
    decisions = ck_copy / ".context" / "decisions.json"
    entries = json.loads(decisions.read_text(encoding="utf-8"))
    entries[1] |= {"summary": "Use NATS for the task queue"}
    decisions.write_text(json.dumps(entries), encoding="utf-8")
    out = run.json("import", "context-keeper", str(ck_copy))
    assert out["already_stored"] == [{"source_id": "dec-002", "file": "decisions.json", "id": mine}]
    records = stored(app)
    assert records["Use Redis pub/sub for the task queue"].superseded_by == mine
    assert mine in records["Publish only to NATS subjects under tasks.*"].related_to


def test_an_entry_edited_since_its_import_updates_its_record(
    app: App, run: Cli, ck_copy: Path
) -> None:
    first = run.json("import", "context-keeper", str(ck_copy))
    decisions = ck_copy / ".context" / "decisions.json"
    entries = json.loads(decisions.read_text(encoding="utf-8"))
    why = (
        "JetStream's durable consumers resume where a stopped worker left off, so no task is lost."
    )
    entries[1] |= {"why_chosen": why}
    decisions.write_text(json.dumps(entries), encoding="utf-8")

    out = run.json("import", "context-keeper", str(ck_copy))

    assert out["counts"]["updated"] == 1 and out["counts"]["imported"] == 0
    imported = {i["source_id"]: i["id"] for i in first["imported"]}
    assert out["updated"][0]["id"] == imported["dec-002"]
    assert run.json("show", imported["dec-002"])["body"]["why_chosen"] == why
    assert len(stored(app)) == 7


def test_a_successor_added_since_supersedes_the_stored_record(
    app: App, run: Cli, tmp_path: Path
) -> None:
    before = tmp_path / "before" / ".context"
    before.mkdir(parents=True)
    entries = json.loads((CK_019 / ".context" / "decisions.json").read_text(encoding="utf-8"))
    flask = entries[0] | {"status": "active", "superseded_by": None}
    (before / "decisions.json").write_text(json.dumps([flask]), encoding="utf-8")
    old_id = run.json("import", "context-keeper", str(before))["imported"][0]["id"]
    out = run.json("import", "context-keeper", str(CK_019))
    new_id = next(i["id"] for i in out["imported"] if i["source_id"] == "dec-002")
    assert out["superseded_existing"] == [{"id": old_id, "superseded_by": new_id}]
    old = app.reader.get(old_id)
    assert old.status is Status.SUPERSEDED and old.superseded_by == new_id


def test_two_entries_saying_the_same_thing_become_one_record(
    app: App, run: Cli, ck_copy: Path
) -> None:
    constraints = ck_copy / ".context" / "constraints.json"
    entries = json.loads(constraints.read_text(encoding="utf-8"))
    entries.append(entries[0] | {"id": "con-003", "related_to": []})
    constraints.write_text(json.dumps(entries), encoding="utf-8")
    out = run.json("import", "context-keeper", str(ck_copy))
    first = next(i["id"] for i in out["imported"] if i["source_id"] == "con-001")
    assert out["already_stored"] == [
        {"source_id": "con-003", "file": "constraints.json", "id": first}
    ]
    assert len(stored(app)) == 7


def test_a_near_identical_restatement_inside_the_import_becomes_one_record(
    app: App, run: Cli, ck_copy: Path
) -> None:
    constraints = ck_copy / ".context" / "constraints.json"
    entries = json.loads(constraints.read_text(encoding="utf-8"))
    reworded = "Publish only to the NATS subjects under tasks.*"
    entries.insert(0, entries[0] | {"id": "con-000", "rule": reworded, "status": "deprecated"})
    constraints.write_text(json.dumps(entries), encoding="utf-8")
    out = run.json("import", "context-keeper", str(ck_copy))
    kept = next(i["id"] for i in out["imported"] if i["source_id"] == "con-001")
    assert out["already_stored"] == [
        {"source_id": "con-000", "file": "constraints.json", "id": kept}
    ]  # the current entry is the one kept, whatever the file order


def test_a_link_to_an_entry_not_in_the_import_is_left_out_and_noted(
    app: App, run: Cli, ck_copy: Path
) -> None:
    constraints = ck_copy / ".context" / "constraints.json"
    entries = json.loads(constraints.read_text(encoding="utf-8"))
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    entries[1]["related_to"] = ["dec-002", "dec-042", token]
    constraints.write_text(json.dumps(entries), encoding="utf-8")
    out = run.json("import", "context-keeper", str(ck_copy))
    assert any("con-002" in n and "dec-042" in n for n in out["notes"])
    assert token not in json.dumps(out)
    mocks = stored(app)["Prefer integration tests against a real NATS server over mocks"]
    assert len(mocks.related_to) == 1


def test_an_entry_holding_a_secret_is_refused_and_the_rest_imported(
    app: App, run: Cli, ck_copy: Path
) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    pipelines = ck_copy / ".context" / "pipelines.json"
    entries = json.loads(pipelines.read_text(encoding="utf-8"))
    entries[0]["steps"][1]["action"] = f"Log in to the registry with {token}"
    pipelines.write_text(json.dumps(entries), encoding="utf-8")
    result = run("import", "context-keeper", str(ck_copy))
    assert result.exit_code == 2
    assert token not in result.output
    assert (
        "1 of 7 context-keeper entries were refused (the rest was imported); the first, pipe-001 "
        "in pipelines.json: The steps holds what looks like a GitHub token" in result.stderr
    )
    assert len(stored(app)) == 6


def test_a_secret_in_the_reason_an_entry_was_retired_is_refused(
    app: App, run: Cli, ck_copy: Path
) -> None:
    pipelines = ck_copy / ".context" / "pipelines.json"
    entries = json.loads(pipelines.read_text(encoding="utf-8"))
    entries[1]["deprecated_reason"] = "Use redis://:hunter2secret@cache.internal:6379 instead"
    pipelines.write_text(json.dumps(entries), encoding="utf-8")
    result = run("import", "context-keeper", str(ck_copy), "--json")
    assert result.exit_code == 2 and "hunter2secret" not in result.output
    refused = json.loads(result.stdout)["refused"]
    assert [(r["source_id"], r["field"]) for r in refused] == [("pipe-002", "archived_reason")]
    assert len(stored(app)) == 6


def test_refusals_are_counted_and_the_first_reason_named(app: App, run: Cli, ck_copy: Path) -> None:
    decisions = ck_copy / ".context" / "decisions.json"
    entries = json.loads(decisions.read_text(encoding="utf-8"))
    entries[1]["problem"] = "Tasks got lost"
    entries[2]["why_chosen"] = "Simpler"
    decisions.write_text(json.dumps(entries), encoding="utf-8")
    result = run("import", "context-keeper", str(ck_copy), "--json")
    assert result.exit_code == 2
    out = json.loads(result.stdout)
    assert out["written"] is True and len(out["imported"]) == 5
    assert [(r["source_id"], r["field"]) for r in out["refused"]] == [
        ("dec-002", "problem"),
        ("dec-003", "why_chosen"),
    ]
    error = out["error"]
    assert error["type"] == "ImportRefused" and error["field"] == "problem"
    assert error["message"].startswith(
        "2 of 7 context-keeper entries were refused (the rest was imported)"
    )
    assert "dec-002 in decisions.json: The decision's problem" in error["message"]
    assert len(stored(app)) == 5


def test_it_imports_into_the_project_resolved_like_any_command(
    app: App, run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    monkeypatch.chdir(outside)
    result = run("import", "context-keeper", str(CK_07))
    assert result.exit_code == 3
    assert "contextd attach" in result.stderr
    out = run.json("import", "context-keeper", str(CK_07), "--project", "orbit")
    assert out["project"] == "orbit" and out["counts"]["imported"] == 7


def test_an_empty_store_has_nothing_to_import(app: App, run: Cli, tmp_path: Path) -> None:
    store = tmp_path / "fresh" / ".context"
    store.mkdir(parents=True)
    (store / "decisions.json").write_text("[]", encoding="utf-8")
    result = run("import", "context-keeper", str(store.parent))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Nothing to import:")
    assert stored(app) == {}


def _loop(ck_copy: Path, status: str = "superseded") -> None:
    """dec-001 and dec-002 each superseded by the other."""
    decisions = ck_copy / ".context" / "decisions.json"
    entries = json.loads(decisions.read_text(encoding="utf-8"))
    entries[0] |= {"status": status, "superseded_by": "dec-002"}
    entries[1] |= {"status": status, "superseded_by": "dec-001"}
    decisions.write_text(json.dumps(entries), encoding="utf-8")


@pytest.mark.parametrize("status", ["superseded", "deprecated"])
def test_entries_superseding_each_other_in_a_loop_are_refused(
    app: App, run: Cli, ck_copy: Path, status: str
) -> None:
    _loop(ck_copy, status)
    result = run("import", "context-keeper", str(ck_copy), "--json")
    assert result.exit_code == 2
    out = json.loads(result.stdout)
    assert [(r["source_id"], r["field"]) for r in out["refused"]] == [
        ("dec-001", "superseded_by"),
        ("dec-002", "superseded_by"),
    ]
    assert out["error"]["message"] == (
        "2 of 7 context-keeper entries were refused (the rest was imported); the first, dec-001 "
        "in decisions.json: it is part of a supersede loop (dec-001 → dec-002 → dec-001): "
        "entries replacing each other in a circle leave none of them current. Fix them in the "
        "source, then run the import again."
    )
    assert len(stored(app)) == 5 and out["written"] is True


def test_a_loop_closed_through_records_already_stored_is_refused(
    app: App, run: Cli, ck_copy: Path
) -> None:
    _loop(ck_copy, "active")  # first both current (an active entry's successor is ignored)
    run.json("import", "context-keeper", str(ck_copy))
    _loop(ck_copy)  # then the source says each replaced the other
    before = {title: (r.status, r.superseded_by) for title, r in stored(app).items()}
    result = run("import", "context-keeper", str(ck_copy), "--json")
    assert result.exit_code == 2
    out = json.loads(result.stdout)
    assert [r["source_id"] for r in out["refused"]] == ["dec-001", "dec-002"]
    assert "supersede loop (dec-001 → dec-002 → dec-001)" in out["error"]["message"]
    assert {title: (r.status, r.superseded_by) for title, r in stored(app).items()} == before
