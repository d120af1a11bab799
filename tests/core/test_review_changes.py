"""[capture] review holds every change an agent asks for to a stored record, not only new
records: update, append, link, supersede, archive and delete wait beside new drafts, and the
record stays as a person approved it until a person approves the change. A real MCP client,
the real CLI (a pseudo-terminal where a person decides), the real store."""

from pathlib import Path

from contextd.app import App
from tests.conftest import DECISION, POSTGRES, Cli
from tests.core.test_review_queue import at_a_terminal, held, held_app  # noqa: F401
from tests.mcp.test_tools import call, data


def test_every_change_an_agent_asks_for_waits_and_changes_nothing(
    held_app: App,  # noqa: F811
    run: Cli,
    repo: Path,
) -> None:
    nats = run.json(*DECISION)["id"]
    postgres = run.json(*POSTGRES)["id"]
    before = {rid: run.json("show", rid) for rid in (nats, postgres)}
    results = call(
        held_app,
        ("update_entry", {"id": nats, "title": "Use NATS JetStream for every queue we run"}),
        ("append", {"id": nats, "text": "Consumers must set ack_wait above the longest task."}),
        ("link", {"id": nats, "to": postgres}),
        ("supersede", {"old_id": postgres, "new_id": nats}),
        ("archive", {"id": nats, "reason": "We moved the queue to the database"}),
        ("delete", {"id": postgres}),
        ("archive", {"id": nats, "reason": "We moved the queue to the database"}),
    )
    for result in results:
        assert data(result)["held_for_review"] is True
        assert result.content[0].text.startswith("Held for review: the ")
    assert {rid: run.json("show", rid) for rid in (nats, postgres)} == before
    waiting = held(run)
    assert [(w["request"], w["target"]) for w in waiting] == [
        ("update", nats),
        ("append", nats),
        ("link", nats),
        ("supersede", postgres),
        ("archive", nats),  # asked twice, waits once
        ("delete", postgres),
    ]
    listing = run("review").stdout
    assert "update D1" in listing and "delete D2" in listing
    assert run("review", "edit", waiting[0]["id"], "--title", "x" * 20).exit_code == 2
    code, output = at_a_terminal(repo, "review", "approve", waiting[0]["id"])
    assert code == 0, output
    assert run.json("show", nats)["title"] == "Use NATS JetStream for every queue we run"
    code, output = at_a_terminal(repo, "review", "approve", waiting[3]["id"])
    assert code == 0, output
    assert run.json("show", postgres)["status"] == "superseded"
    code, output = at_a_terminal(repo, "review", "reject", waiting[5]["id"])
    assert code == 0, output
    assert run.json("show", postgres)["id"] == postgres  # not deleted
    changes = run.json("history", nats)["changes"]
    assert [c["event"] for c in changes] == ["created", "updated"]
    assert changes[1]["via"] == "cli"  # approved by the person, at the terminal
