"""Every change can be undone and read back: `unsupersede` makes a superseded record current
again with the links its successor took over, `restore` brings a deleted record back with its
handle and links, and `history` lists each change with who made it and through what."""

from pathlib import Path

from contextd.app import App
from tests.conftest import DECISION, POSTGRES, Cli
from tests.mcp.test_tools import call, data

RULE = (
    "add",
    "Queue workers must acknowledge within 30 seconds",
    "--category",
    "gotcha",
    "--related",
    "D1",
)


def test_unsupersede_makes_the_old_record_current_and_takes_its_links_back(
    run: Cli, repo: Path
) -> None:
    old, new = run.json(*DECISION), run.json(*POSTGRES)
    rule = run.json(*RULE)
    out = run("supersede", "D1", "--by", "D2")
    assert "`contextd unsupersede D1` undoes it" in out.stdout
    assert run.json("show", rule["id"])["related_to"] == [new["id"]]  # the link followed
    undone = run("unsupersede", "D1")
    assert undone.exit_code == 0, undone.output
    assert undone.stdout.startswith("D1 (Use NATS for the task queue) is current again; D2")
    assert run.json("show", "D1")["status"] == "active"
    assert run.json("show", "D1")["superseded_by"] is None
    assert run.json("show", rule["id"])["related_to"] == [old["id"]]  # and came back
    assert run.json("show", "D2")["status"] == "active"
    again = run("unsupersede", "D1")
    assert again.exit_code == 4 and "is active, not superseded" in again.stderr


def test_a_deleted_record_comes_back_whole_with_its_handle_and_links(run: Cli, repo: Path) -> None:
    decision = run.json(*DECISION)
    rule = run.json(*RULE)
    out = run("delete", "D1")
    assert "`contextd restore D1` undoes it" in out.stdout
    assert run.json("show", rule["id"])["related_to"] == []
    assert run("show", "D1").exit_code == 3
    restored = run("restore", "D1")
    assert restored.exit_code == 0, restored.output
    assert restored.stdout == "Restored decision D1: Use NATS for the task queue\n"
    shown = run.json("show", "D1")
    assert shown["id"] == decision["id"] and shown["body"] == decision["body"]
    assert run.json("show", rule["id"])["related_to"] == [decision["id"]]
    assert run.json("search", "task queue")["results"][0]["id"] == decision["id"]
    assert run("restore", "D1").exit_code == 4  # it is not deleted now
    assert run("restore", "D9").exit_code == 3


def test_history_says_who_changed_a_record_and_through_what(app: App, run: Cli, repo: Path) -> None:
    decision = run.json(*DECISION)["id"]
    run.json("verify", "D1")
    (changed,) = call(app, ("update_entry", {"id": decision, "tags": ["queue"]}))
    assert data(changed)["tags"] == ["queue"]
    history = run.json("history", "D1")
    assert history["handle"] == "D1" and history["id"] == decision
    assert [(c["event"], c["via"]) for c in history["changes"]] == [
        ("created", "cli"),
        ("verified", "cli"),
        ("updated", "mcp (in-memory-agent)"),
    ]
    text = run("history", "D1").stdout
    assert "updated" in text and "mcp (in-memory-agent)" in text
    run.json("delete", "D1")
    assert run.json("history", "D1")["changes"][-1]["event"] == "deleted"
