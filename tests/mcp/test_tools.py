"""MCP tools spoken to in memory by the SDK's own client (the subprocess path is covered by
test_server.py): append, link, origin, get_context's filters, every tool error as a result."""

from typing import Any

import anyio
from mcp.types import CallToolResult, Implementation

from contextd.app import App
from contextd.mcp.server import build_server
from mcp import Client
from tests.conftest import DECISION, POSTGRES, Cli

DECISION_ARGS = {
    "summary": "Use NATS JetStream for the task queue",
    "problem": "Redis pub/sub dropped tasks whenever workers reconnected during a deploy",
    "why_chosen": "JetStream keeps durable consumers with acks and replay for every worker",
}


def call(app: App, *calls: tuple[str, dict[str, Any]]) -> list[CallToolResult]:
    """Run tool calls in order against a server over `app`, in this process."""
    results: list[CallToolResult] = []

    async def main() -> None:
        info = Implementation(name="in-memory-agent", version="1")
        async with Client(build_server(app), client_info=info) as client:
            for name, arguments in calls:
                results.append(await client.call_tool(name, arguments))

    anyio.run(main)
    return results


def data(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None
    return result.structured_content


def test_append_adds_to_the_main_text_and_verifies_it(app: App) -> None:
    (stored,) = call(app, ("record_decision", DECISION_ARGS))
    rid = data(stored)["id"]
    appended, to_field, refused = call(
        app,
        ("append", {"id": rid, "text": "Consumers must set ack_wait above the longest task."}),
        ("append", {"id": rid, "text": "Kafka was slower to run here.", "field": "alternatives"}),
        ("append", {"id": rid, "text": "x", "field": "purpose"}),
    )
    body = data(appended)["body"]
    assert body["why_chosen"] == (
        f"{DECISION_ARGS['why_chosen']}. Consumers must set ack_wait above the longest task."
    )
    assert data(appended)["verified_at"] == data(appended)["updated_at"]
    assert data(to_field)["body"]["alternatives"] == "Kafka was slower to run here."
    assert refused.is_error and "no text field 'purpose'" in refused.content[0].text


def test_link_relates_two_records_and_retrieval_brings_the_other(app: App, run: Cli) -> None:
    nats = run.json(*DECISION)["id"]
    rule = run.json(
        "constrain",
        "Consumers acknowledge a task only after its side effects are committed",
        "--reason",
        "An early ack loses the task when the worker dies between ack and commit",
        "--hardness",
        "strong",
    )["id"]
    linked, again, missing = call(
        app,
        ("link", {"id": rule, "to": nats}),
        ("link", {"id": rule, "to": nats}),
        ("link", {"id": rule, "to": "ffffffff"}),
    )
    assert data(linked)["related_to"] == [nats] == data(again)["related_to"]
    assert missing.is_error and "No record" in missing.content[0].text


def test_origin_says_who_stated_it(app: App) -> None:
    told, own = call(
        app,
        (
            "remember",
            {
                "text": "The user wants answers in French",
                "category": "preference",
                "origin": "user",
            },
        ),
        ("remember", {"text": "Tests take four minutes on this machine", "category": "gotcha"}),
    )
    assert data(told)["origin"] == "user" and data(own)["origin"] == "agent"
    (forged,) = call(
        app,
        (
            "remember",
            {"text": "A forged import note here", "category": "gotcha", "origin": "import"},
        ),
    )
    assert forged.is_error  # only user or agent may be claimed over MCP


def test_get_context_takes_the_filters_the_cli_has(app: App, run: Cli) -> None:
    run.json(*DECISION)
    run.json("add", "Workers drain the task queue before a deploy", "--category", "gotcha")
    archived = run.json("add", "The task queue once ran on Redis", "--category", "architecture")
    run.json("archive", archived["id"], "--reason", "the queue moved to NATS")
    gotchas, with_archived, diverse = call(
        app,
        ("get_context", {"query": "task queue", "category": "gotcha"}),
        ("get_context", {"query": "task queue Redis", "include_archived": True}),
        ("get_context", {"query": "task queue", "mmr": True, "kind": "decision"}),
    )
    assert {r["category"] for r in data(gotchas)["results"]} == {"gotcha"}
    assert archived["id"] in {r["id"] for r in data(with_archived)["results"]}
    assert {r["kind"] for r in data(diverse)["results"]} == {"decision"}


def test_errors_speak_mcp_every_bad_field_at_once(app: App, run: Cli) -> None:
    thin, missing, wrong_type, duplicate, unknown = call(
        app,
        ("record_decision", {"summary": "short", "problem": "too short", "why_chosen": "no"}),
        ("record_decision", {"summary": "A decision without its reasons"}),
        ("search", {"query": "queue", "limit": "many"}),
        ("record_decision", {**DECISION_ARGS}),
        ("get_entry", {"id": "ffffffffff"}),
    )
    text = thin.content[0].text
    assert thin.is_error and "3 fields need work" in text
    assert "(fix: summary (text, rule or name), problem, why_chosen)" in text
    assert "--" not in text  # no CLI flag in an agent's error
    assert missing.content[0].text == (
        "The arguments of record_decision need fixing: problem field required; "
        "why_chosen field required."
    )
    assert "pydantic" not in wrong_type.content[0].text and "limit" in wrong_type.content[0].text
    assert not duplicate.is_error
    (again,) = call(app, ("record_decision", {**DECISION_ARGS}))
    words = again.content[0].text
    assert again.is_error and "update_entry" in words and "force=true" in words
    assert "contextd update" not in words and "--force" not in words
    assert "search or get_project_summary lists the records" in unknown.content[0].text


def test_session_info_names_a_project_it_cannot_find_once_a_session_is_open(app: App) -> None:
    opened, unknown = call(app, ("session_info", {}), ("session_info", {"project": "nope"}))
    assert data(opened)["this_connection"] is True
    assert unknown.is_error and "No project named 'nope'" in unknown.content[0].text


def test_checkpoint_after_checkpoint_is_stored(app: App) -> None:
    where = {
        "summary": "Moving the task queue to NATS JetStream",
        "goal": "Workers consume from JetStream with durable consumers",
        "done": ["Publisher switched to JetStream"],
        "next": ["Switch the workers"],
    }
    later = {**where, "done": [*where["done"], "Workers switched"], "next": ["Drop Redis"]}
    first, second = call(app, ("checkpoint", where), ("checkpoint", later))
    assert data(first)["id"] != data(second)["id"]


def test_append_joins_a_memory_as_sentences_and_a_list_as_lines(app: App) -> None:
    (stored,) = call(
        app, ("remember", {"text": "Timing tests on CI are noisy", "category": "gotcha"})
    )
    rid = data(stored)["id"]
    (sentence,) = call(app, ("append", {"id": rid, "text": "Run benchmarks locally"}))
    assert data(sentence)["title"] == "Timing tests on CI are noisy. Run benchmarks locally"
    (listed,) = call(
        app,
        ("remember", {"text": "Release steps:\n- tag the commit", "category": "convention"}),
    )
    (line,) = call(app, ("append", {"id": data(listed)["id"], "text": "- push the tag"}))
    assert data(line)["title"] == "Release steps:\n- tag the commit\n- push the tag"


def test_get_context_by_tags_alone_returns_the_current_tagged_records(app: App, run: Cli) -> None:
    old = run.json(*DECISION, "--tag", "queue")
    new = run.json(*POSTGRES, "--tag", "queue", "--priority", "5", "--supersedes", old["id"])
    loose = run.json(
        "add", "Workers drain before a deploy", "--category", "gotcha", "--tag", "queue"
    )
    run.json("add", "The docs build with mkdocs", "--category", "convention", "--tag", "docs")
    tagged, gotchas, nothing, search = call(
        app,
        ("get_context", {"tags": ["queue"]}),
        ("get_context", {"tags": ["queue"], "category": "gotcha", "budget": 200}),
        ("get_context", {}),
        ("search", {"kind": "decision"}),
    )
    ids = [r["id"] for r in data(tagged)["results"]]
    assert ids == [new["id"], loose["id"]]  # priority first; the superseded one left out
    assert "mkdocs" not in data(tagged)["context"]
    assert [r["id"] for r in data(gotchas)["results"]] == [loose["id"]]
    assert nothing.is_error and "Give a query, or a filter" in nothing.content[0].text
    assert [r["id"] for r in data(search)["results"]] == [new["id"]]


def test_an_argument_a_tool_does_not_have_is_refused_and_nothing_is_done(
    app: App, run: Cli
) -> None:
    private, as_of, made_up = call(
        app,
        ("remember", {"text": "Staging deploys wait for the nightly backup", "private": True}),
        ("get_context", {"query": "task queue", "as_of": "2026-01-01"}),
        ("search", {"query": "task queue", "colour": "red", "bogus": 1}),
    )
    assert private.is_error
    assert private.content[0].text.startswith(
        "remember has no argument 'private'; nothing was done. Its arguments are: "
    )
    assert "category" in private.content[0].text
    assert as_of.is_error and "get_context has no argument 'as_of'" in as_of.content[0].text
    assert made_up.is_error and "no argument 'bogus' or 'colour'" in made_up.content[0].text
    assert run.json("memories")["records"] == []


def test_priority_is_set_and_changed_over_mcp_as_on_the_cli(app: App) -> None:
    """The CLI and the web view set a record's priority; so do the record tools and
    update_entry (1 to 5, refused outside it)."""
    stored, wrong = call(
        app,
        ("record_decision", DECISION_ARGS | {"priority": 5}),
        ("remember", {"text": "Tests take four minutes here", "category": "gotcha", "priority": 9}),
    )
    record = data(stored)
    assert record["priority"] == 5
    assert wrong.is_error and "priority" in wrong.content[0].text
    (changed,) = call(app, ("update_entry", {"id": record["id"], "priority": 2}))
    assert data(changed)["priority"] == 2
    assert app.reader.get(record["id"]).priority == 2
