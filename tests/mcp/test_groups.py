"""Project groups through MCP, spoken to by the SDK's own client: the record tools write into
the project's group under the same rules as the CLI, and get_context, search and the project
summary of a member carry the group's records below its own."""

from pathlib import Path

import pytest

from contextd.app import App
from tests.conftest import Cli, make_repo
from tests.mcp.test_tools import call, data

LOGS = "Every service writes its logs as JSON lines to stdout for the collector"
OWN = "Orbit writes its logs as JSON lines through structlog processors"
RULE = {
    "rule": "Services never call each other's databases directly",
    "reason": "Each service owns its schema; a direct query breaks on the owner's migrations",
    "hardness": "strong",
}


@pytest.fixture
def grouped(app: App, run: Cli, tmp_path: Path) -> str:
    """The app's project (orbit) and a sibling in group `shop`; `loner` in none."""
    for name in ("sibling", "loner"):
        folder = make_repo(tmp_path / name, f"git@github.com:acme/{name}.git")
        assert run("attach", str(folder), "--no-import").exit_code == 0
    run.json("group", "create", "Shop")
    assert run("group", "add", "shop", "orbit", "sibling").exit_code == 0
    return str(run.json("group", "show", "shop")["id"])


def test_record_tools_write_into_the_projects_group(app: App, grouped: str) -> None:
    stored, rule, own = call(
        app,
        ("remember", {"text": LOGS, "category": "convention", "group": ""}),
        ("record_constraint", RULE | {"group": "shop"}),
        ("remember", {"text": OWN, "category": "convention"}),
    )
    assert data(stored)["project_id"] == grouped and data(stored)["group"] == "shop"
    assert "in project group shop" in stored.content[0].text
    assert data(rule)["project_id"] == grouped
    assert data(own)["project_id"] == app.current_project().id and "group" not in data(own)
    shown, shown_own = call(
        app, ("get_entry", {"id": data(stored)["id"]}), ("get_entry", {"id": data(own)["id"]})
    )
    assert data(shown)["group"] == "shop" and "group: shop" in shown.content[0].text
    assert "group" not in data(shown_own) and "group:" not in shown_own.content[0].text


def test_a_group_the_project_is_not_in_is_refused_as_a_tool_error(
    app: App, grouped: str, run: Cli
) -> None:
    run.json("group", "create", "Tools")
    outside, unknown, lonely, secret = call(
        app,
        ("remember", {"text": LOGS, "category": "convention", "group": "tools"}),
        ("record_constraint", RULE | {"group": "warehouse"}),
        ("remember", {"text": LOGS, "category": "convention", "group": "", "project": "loner"}),
        (
            "remember",
            {
                "text": "Deploys push with token ghp_" + "a1B2c3D4e5" * 4,
                "category": "gotcha",
                "group": "",
            },
        ),
    )
    assert outside.is_error and "orbit is not a member of group tools" in outside.content[0].text
    assert unknown.is_error and "No group named 'warehouse'" in unknown.content[0].text
    assert lonely.is_error and "loner belongs to no group" in lonely.content[0].text
    assert secret.is_error and "a1B2c3D4e5" not in secret.content[0].text
    assert run.json("group", "show", "shop")["active_records"] == 0


def test_a_members_context_carries_the_group_below_its_own_records(app: App, grouped: str) -> None:
    args = {"text": LOGS, "category": "convention", "force": True}
    shared, mine, everywhere = call(
        app,
        ("remember", args | {"group": ""}),
        ("remember", args),
        ("remember", args | {"is_global": True}),
    )
    ids = [data(mine)["id"], data(shared)["id"], data(everywhere)["id"]]
    found, context, summary, sibling, loner = call(
        app,
        ("search", {"query": "JSON lines stdout"}),
        ("get_context", {"query": "JSON lines stdout"}),
        ("get_project_summary", {}),
        ("search", {"query": "JSON lines stdout", "project": "sibling"}),
        ("search", {"query": "JSON lines stdout", "project": "loner"}),
    )
    hits = data(found)["results"]
    assert [h["id"] for h in hits] == ids
    assert [h["scope"] for h in hits] == ["project", "group", "global"]
    text = data(context)["context"]
    assert text.index(ids[0]) < text.index(ids[1]) < text.index(ids[2])
    briefing = data(summary)["briefing"]
    assert briefing.index(ids[0]) < briefing.index(ids[1]) < briefing.index(ids[2])
    assert [h["id"] for h in data(sibling)["results"]] == ids[1:]
    assert [h["id"] for h in data(loner)["results"]] == ids[2:]
