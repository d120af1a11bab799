"""Every tool advertises an output schema, and what it returns conforms to it: a call of every
tool (in the shapes it can take: labelled, archived, replaced, with similar records) checked
by `jsonschema` against the schema `tools/list` advertises."""

import copy
from collections import defaultdict
from typing import Any

import anyio
import jsonschema
import pytest
from mcp.types import CallToolResult, Implementation, Tool

from contextd.app import App
from contextd.mcp.server import build_server
from mcp import Client
from tests.conftest import Cli

NATS = {
    "summary": "Use NATS JetStream for the task queue",
    "problem": "Redis pub/sub dropped tasks whenever workers reconnected during a deploy",
    "why_chosen": "JetStream keeps durable consumers with acks and replay for every worker",
    "tags": ["queue"],
}
POSTGRES = {
    "summary": "Use PostgreSQL SKIP LOCKED for the task queue",
    "problem": "We want a durable task queue without one more service in production",
    "why_chosen": "Postgres is already deployed and SKIP LOCKED gives safe concurrent dequeue",
}


def every_tool_called(app: App) -> tuple[dict[str, Tool], dict[str, list[CallToolResult]]]:
    """The listed tools, and the results of calls covering every tool and the optional keys
    of their results."""
    results: dict[str, list[CallToolResult]] = defaultdict(list)

    async def main() -> dict[str, Tool]:
        info = Implementation(name="schema-agent", version="1")
        async with Client(build_server(app), client_info=info) as client:

            async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
                result = await client.call_tool(name, arguments)
                assert not result.is_error, (name, result.content[0].text)
                results[name].append(result)
                assert result.structured_content is not None, name
                return result.structured_content

            memory = await call(
                "remember",
                {"text": "Deploys run from the release branch only", "category": "convention"},
            )
            nats = await call("record_decision", NATS)
            rule = await call(
                "record_constraint",
                {
                    "rule": "Consumers acknowledge a task only after its effects commit",
                    "reason": "An early ack loses the task when the worker dies before commit",
                    "hardness": "strong",
                    "scope": ["src/queue/**"],
                },
            )
            await call(
                "record_pipeline",
                {
                    "name": "release",
                    "purpose": "Ship a tagged build of the workers to production safely",
                    "steps": ["tag", "build the image", "roll out"],
                },
            )
            stop = await call("checkpoint", {"summary": "Queue moved", "next": ["drain"]})
            newer = await call("record_decision", POSTGRES | {"supersedes": [nats["id"]]})
            again = await call("record_decision", NATS | {"force": True})  # with similar ones
            for text in (
                "Background jobs go through RQ backed by the Redis instance we run",
                "Background jobs moved to NATS JetStream instead of RQ on Redis",  # replaces it
            ):
                await call("remember", {"text": text, "category": "architecture"})
            await call("update_entry", {"id": memory["id"], "tags": ["deploy"]})
            await call("append", {"id": rule["id"], "text": "Workers retry after a crash."})
            await call("link", {"id": rule["id"], "to": memory["id"]})
            await call("get_context", {"query": "task queue consumers acknowledge"})
            await call("get_context", {"query": "task queue", "include_superseded": True})
            await call("search", {"query": "task queue", "include_superseded": True})
            await call("get_entry", {"id": nats["id"]})
            await call("get_entry", {"id": newer["id"]})
            later = await call(
                "remember", {"text": "Deploys run from release tags only", "category": "convention"}
            )
            await call("supersede", {"old_id": memory["id"], "new_id": later["id"]})
            await call(
                "remember",
                {
                    "text": "Deploys run from signed release tags only",
                    "category": "convention",
                    "supersedes": [later["id"]],
                },
            )
            await call("get_entry", {"id": memory["id"]})  # replaced twice: successor, current
            await call("archive", {"id": stop["id"], "reason": "the queue work is done"})
            await call("archive", {"id": again["id"]})
            await call("verify_entry", {"id": rule["id"]})
            await call("learn", {"query": "how do consumers ack", "id": rule["id"]})
            await call("prune_stale", {"days": 0})
            await call("verify_quality", {})
            await call("get_project_summary", {"budget": 500})
            await call("session_info", {})
            await call("get_compaction_report", {})
            project = app.project(None, app.settings.cwd)
            app.hook_state.note_shown("sess-1", [app.reader.get(rule["id"])], "briefing")
            app.hook_state.snapshot("sess-1", project, "manual", 0)
            await call("get_compaction_report", {})
            await call("end_session", {"summary": "moved the queue"})
            await call("delete", {"id": stop["id"]})
            return {tool.name: tool for tool in (await client.list_tools()).tools}

    return anyio.run(main), results


def test_every_tool_returns_content_its_output_schema_describes(app: App) -> None:
    tools, results = every_tool_called(app)
    assert set(results) == set(tools)  # a new tool needs a call here
    for name, tool in tools.items():
        schema = tool.output_schema
        assert schema is not None and schema["type"] == "object", name
        jsonschema.Draft202012Validator.check_schema(schema)
        for result in results[name]:
            jsonschema.validate(result.structured_content, schema)
    # The calls reached the keys only some results carry, so their schemas were checked too.
    seen = _keys(results)
    for key in ("label", "archived_reason", "successor", "current", "likely_replaces"):
        assert key in seen, key
    assert {"similar", "supersedes", "linked_from", "report", "lost"} <= seen


def _keys(results: dict[str, list[CallToolResult]]) -> set[str]:
    found: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if item not in (None, []):
                    found.add(key)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for calls in results.values():
        for result in calls:
            walk(result.structured_content)
    return found


def test_output_schemas_are_closed_so_drift_fails(app: App) -> None:
    """A key the schema does not name, a missing one, or one of another type is invalid."""
    tools, results = every_tool_called(app)
    for name in ("get_entry", "search", "session_info", "remember"):
        schema = tools[name].output_schema
        assert schema is not None
        content = results[name][0].structured_content
        assert content is not None
        grown = copy.deepcopy(content) | {"extra": 1}
        shrunk = {k: v for k, v in content.items() if k != next(iter(content))}
        for wrong in (grown, shrunk):
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate(wrong, schema)
    record = results["get_entry"][0].structured_content
    assert record is not None
    schema = tools["get_entry"].output_schema
    assert schema is not None
    for change in ({"priority": "high"}, {"label": None}, {"body": {"problem": "p"}}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(record | change, schema)


def test_read_only_servers_advertise_the_same_schemas(app: App) -> None:
    async def main() -> tuple[list[Tool], list[Tool]]:
        async with (
            Client(build_server(app)) as full,
            Client(build_server(app, read_only=True)) as reader,
        ):
            return (await full.list_tools()).tools, (await reader.list_tools()).tools

    full, reader = anyio.run(main)
    schemas = {t.name: t.output_schema for t in full}
    assert reader and all(t.output_schema == schemas[t.name] for t in reader)


def test_a_tool_error_stays_a_readable_error_not_a_schema_failure(app: App, run: Cli) -> None:
    async def main() -> list[CallToolResult]:
        async with Client(build_server(app)) as client:
            return [
                await client.call_tool("get_entry", {"id": "ffffffffff"}),
                await client.call_tool("record_decision", {**NATS, "why_chosen": "no"}),
                await client.call_tool("end_session", {"project": "nope"}),
            ]

    for result in anyio.run(main):
        assert result.is_error and result.structured_content is None
        text = result.content[0].text  # type: ignore[union-attr]
        assert "validation error" not in text and "Error executing tool" in text
        assert "outputSchema" not in text and "structured" not in text
