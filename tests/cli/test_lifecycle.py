"""update, supersede, archive, delete, verify and stale through the CLI."""

import json
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import DECISION, POSTGRES, Cli

pytestmark = pytest.mark.usefixtures("repo")


def test_update_changes_fields_and_keeps_the_id(run: Cli) -> None:
    record = run.json(*DECISION)
    updated = run.json(
        "update",
        record["id"],
        "--title",
        "Use NATS JetStream for the task queue",
        "--tradeoffs",
        "One more service to run",
        "--tag",
        "queue",
    )
    assert updated["id"] == record["id"]
    assert updated["title"] == "Use NATS JetStream for the task queue"
    assert updated["body"]["tradeoffs"] == "One more service to run"
    assert updated["body"]["problem"] == record["body"]["problem"]
    assert updated["tags"] == ["queue"]
    assert updated["updated_at"] > record["updated_at"]
    assert run.json("search", "jetstream")["results"][0]["id"] == record["id"]


def test_update_applies_the_same_rules_as_create(run: Cli) -> None:
    record = run.json(*DECISION)
    result = run("update", record["id"], "--why", "It is faster")
    assert result.exit_code == 2
    assert "--why" in result.stderr
    assert run.json("show", record["id"])["body"]["why_chosen"] == record["body"]["why_chosen"]


def test_update_refuses_a_field_the_kind_does_not_have(run: Cli) -> None:
    record = run.json("add", "Builds need Node 20 or newer", "--category", "gotcha")
    result = run("update", record["id"], "--reason", "r" * 50)
    assert result.exit_code == 2
    assert "has no field 'reason'" in result.stderr


def test_update_with_nothing_to_change_is_refused(run: Cli) -> None:
    record = run.json(*DECISION)
    result = run("update", record["id"])
    assert result.exit_code == 2
    assert "Nothing to change" in result.stderr


def test_supersede_hides_the_old_record_and_show_names_its_successor(run: Cli) -> None:
    old = run.json(*DECISION)
    new = run.json(*POSTGRES)
    out = run.json("supersede", old["id"], "--by", new["id"])
    assert out["superseded"]["status"] == "superseded"
    assert out["superseded"]["label"] == "NOT CURRENT"
    assert [r["id"] for r in run.json("search", "task queue")["results"]] == [new["id"]]
    history = run.json("search", "task queue", "--include-superseded")["results"]
    assert [r["id"] for r in history] == [new["id"], old["id"]]
    assert history[1]["label"] == "NOT CURRENT"
    shown = run.json("show", old["id"])
    assert shown["superseded_by"] == new["id"]
    assert shown["successor"]["id"] == new["id"]
    assert run.json("show", new["id"])["supersedes"][0]["id"] == old["id"]
    text = run("show", old["id"]).stdout
    assert "NOT CURRENT" in text and "Superseded by" in text
    assert [r["id"] for r in run.json("memories")["records"]] == [new["id"]]
    assert len(run.json("memories", "--all")["records"]) == 2


def test_a_supersede_chain_shows_the_current_end(run: Cli) -> None:
    redis = run.json(
        "decide", "Use Redis lists for the task queue", "--problem", "p" * 40, "--why", "w" * 60
    )
    postgres = run.json(*POSTGRES)
    nats = run.json(*DECISION)
    run.json("supersede", redis["id"], "--by", postgres["id"])
    run.json("supersede", postgres["id"], "--by", nats["id"])
    shown = run.json("show", redis["id"])
    assert shown["successor"]["id"] == postgres["id"]
    assert shown["current"]["id"] == nats["id"]


@pytest.mark.parametrize("case", ["self", "twice", "by-retired"])
def test_supersede_refuses_what_would_break_history(run: Cli, case: str) -> None:
    old = run.json(*DECISION)
    new = run.json(*POSTGRES)
    if case == "self":
        result = run("supersede", old["id"], "--by", old["id"])
        assert result.exit_code == 2
    elif case == "twice":
        run.json("supersede", old["id"], "--by", new["id"])
        result = run("supersede", old["id"], "--by", new["id"])
        assert result.exit_code == 4 and "already superseded" in result.stderr
    else:
        run.json("archive", new["id"])
        result = run("supersede", old["id"], "--by", new["id"])
        assert result.exit_code == 4 and "archived" in result.stderr


def test_archive_and_unarchive_round_trip(run: Cli) -> None:
    record = run.json(*DECISION)
    assert run.json("archive", record["id"])["status"] == "archived"
    assert run.json("search", "task queue")["results"] == []
    assert (
        run.json("search", "task queue", "--include-archived")["results"][0]["id"] == record["id"]
    )
    assert run("archive", record["id"]).exit_code == 4
    assert run.json("unarchive", record["id"])["status"] == "active"
    assert run.json("search", "task queue")["results"][0]["id"] == record["id"]


def test_archive_keeps_its_reason_until_unarchived(run: Cli) -> None:
    record = run.json(*DECISION)
    archived = run.json("archive", record["id"], "--reason", "The queue moved to NATS")
    assert archived["archived_reason"] == "The queue moved to NATS"
    assert "Archived because: The queue moved to NATS" in run("show", record["id"]).output
    assert "archived_reason" not in run.json("unarchive", record["id"])


def test_unarchive_of_a_replaced_record_returns_it_to_superseded(run: Cli) -> None:
    old = run.json(*DECISION)
    new = run.json(*POSTGRES)
    run.json("supersede", old["id"], "--by", new["id"])
    run.json("archive", old["id"])
    assert run.json("unarchive", old["id"])["status"] == "superseded"


def test_delete_leaves_a_tombstone_and_unlinks_related_records(run: Cli, home: Path) -> None:
    target = run.json(*DECISION)
    linked = run.json(
        "add",
        "Workers ack only after the handler commits",
        "--category",
        "convention",
        "--related",
        target["id"],
    )
    out = run.json("delete", target["id"])
    assert out["deleted"] == target["id"]
    gone = run("show", target["id"])
    assert gone.exit_code == 3 and "was deleted on" in gone.stderr
    assert run.json("show", linked["id"])["related_to"] == []
    assert run.json("search", "task queue")["results"] == []
    with sqlite3.connect(home / "contextd.db") as conn:
        assert (
            conn.execute(
                "SELECT count(*) FROM tombstones WHERE id = ?", (target["id"],)
            ).fetchone()[0]
            == 1
        )


def test_verify_restamps_and_stale_lists_old_records(run: Cli, home: Path) -> None:
    old = run.json(*DECISION)
    fresh = run.json(*POSTGRES)
    with sqlite3.connect(home / "contextd.db") as conn:
        conn.execute(
            "UPDATE records SET verified_at = '2020-01-01T00:00:00.000Z' WHERE id = ?", (old["id"],)
        )
    stale = run.json("stale", "--days", "30")
    assert [r["id"] for r in stale["records"]] == [old["id"]]
    verified = run.json("verify", old["id"])
    assert verified["verified_at"] > fresh["verified_at"]
    assert run.json("stale", "--days", "30")["records"] == []
    assert "Nothing unverified" in run("stale").stdout


def test_ids_resolve_from_a_handle_or_unique_prefix_and_refuse_ambiguity(
    run: Cli, home: Path
) -> None:
    record = run.json(*DECISION)
    assert run.json("show", record["id"][:8].upper())["id"] == record["id"]
    twin = run.json(*POSTGRES)
    with sqlite3.connect(home / "contextd.db") as conn:  # force a shared 8-character prefix
        conn.execute(
            "UPDATE records SET id = ? WHERE id = ?",
            (record["id"][:8] + twin["id"][8:], twin["id"]),
        )
    twin_id = record["id"][:8] + twin["id"][8:]
    ambiguous = run("show", record["id"][:8])
    assert ambiguous.exit_code == 2
    assert ambiguous.stderr.startswith(f"Error: '{record['id'][:8]}' fits 2 records, so ")
    assert f"D1 = {record['id']}, decision 'Use NATS for the task queue'" in ambiguous.stderr
    assert f"D2 = {twin_id}, decision" in ambiguous.stderr
    assert run.json("show", "D1")["id"] == record["id"]
    assert run.json("show", "d2")["id"] == twin_id
    too_short = run("show", record["id"][:7])
    assert too_short.exit_code == 2 and "or its handle (such as D12)" in too_short.stderr
    assert run.json("show", record["id"])["id"] == record["id"]
    assert run("show", "D3").exit_code == 3


def test_the_handle_printed_at_write_time_names_its_record_however_many_follow(
    run: Cli,
) -> None:
    """A burst of writes shares its first id characters (ids are time-ordered); each handle
    printed when a record was stored keeps naming it, and lists print the same handle."""
    printed = {}
    for n in range(8):
        out = run("add", f"Service {n} listens on port {8000 + n}", "--category", "convention")
        assert out.exit_code == 0, out.output
        handle = out.stdout.split("Recorded memory ", 1)[1].split(":", 1)[0]
        printed[handle] = run.json("show", handle)["id"]
    assert list(printed) == [f"M{n}" for n in range(1, 9)]
    assert len(set(printed.values())) == 8
    assert run("delete", "M8").exit_code == 0
    out = run("add", "Service 9 listens on port 8009", "--category", "convention")
    assert "Recorded memory M9:" in out.stdout  # a deleted record's number is not given again
    for handle, record_id in list(printed.items())[:7]:
        assert run.json("show", handle)["id"] == record_id
        assert handle in run("show", record_id).stdout
    listed = run("memories").stdout
    assert all(handle in listed for handle in list(printed)[:7])


def test_json_errors_are_machine_readable(run: Cli) -> None:
    result = run("show", "0000000000", "--json")
    assert result.exit_code == 3
    assert json.loads(result.stdout)["error"]["type"] == "NotFoundError"


def test_a_store_from_before_handles_numbers_its_records_in_written_order(
    run: Cli, home: Path
) -> None:
    """Migration 0020 gives each older record a handle, per kind in the order written, and
    the next record of a kind takes the next number."""
    ids = [
        run.json("add", f"Queue {n} drains every {n + 2} seconds", "--category", "convention")["id"]
        for n in range(3)
    ]
    decision = run.json(*DECISION)["id"]
    with sqlite3.connect(home / "contextd.db") as conn:  # the store as 0019 left it
        conn.execute("DROP INDEX records_handle")
        conn.execute("DROP TABLE record_handles")
        conn.execute("ALTER TABLE records RENAME COLUMN handle TO short_id")
        conn.execute("UPDATE records SET short_id = substr(id, 1, 8)")
        conn.execute("CREATE INDEX records_short_id ON records(short_id)")
        conn.execute("DELETE FROM _migrations WHERE version = 20")
        conn.execute("PRAGMA user_version = 19")
    assert [run.json("show", f"M{n}")["id"] for n in (1, 2, 3)] == ids
    assert run.json("show", "D1")["id"] == decision
    out = run("add", "Queue 4 drains every 6 seconds", "--category", "convention")
    assert "Recorded memory M4:" in out.stdout
