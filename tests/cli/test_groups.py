"""Project groups through the CLI: making them, membership, writing into one, and what a
member project then sees (recall order, briefings) while a project in no group sees what it
always did."""

from pathlib import Path

import pytest

from tests.conftest import Cli, make_repo

LOGS = "Every service writes its logs as JSON lines to stdout for the collector"
OWN = "Checkout service writes its logs as JSON lines through structlog"
EVERYWHERE = "All logs carry UTC timestamps in RFC 3339 with milliseconds"


@pytest.fixture
def family(tmp_path: Path, run: Cli, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Three attached projects: checkout and billing in group `shop`, and a loner."""
    folders = {}
    for name in ("checkout", "billing", "loner"):
        folders[name] = make_repo(tmp_path / name, f"git@github.com:acme/{name}.git")
        assert run("attach", str(folders[name]), "--no-import").exit_code == 0
    created = run.json("group", "create", "Shop")
    assert created["group"]["slug"] == "shop" and created["group"]["members"] == []
    assert run("group", "add", "shop", "checkout", "billing").exit_code == 0
    monkeypatch.chdir(folders["checkout"])
    return folders


def _fails(run: Cli, *args: str) -> tuple[int, str]:
    result = run(*args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr  # one sentence
    return result.exit_code, lines[0]


def test_groups_are_made_listed_shown_and_left(family: dict[str, Path], run: Cli) -> None:
    listed = run.json("group", "list")["groups"]
    assert [(g["slug"], [m["slug"] for m in g["members"]]) for g in listed] == [
        ("shop", ["billing", "checkout"])
    ]
    text = run("group", "list").output
    assert "shop" in text and "billing, checkout" in text
    shown = run.json("group", "show", "Shop")
    assert shown["active_records"] == 0 and len(shown["members"]) == 2
    left = run.json("group", "remove", "shop", "billing")
    assert [m["slug"] for m in left["group"]["members"]] == ["checkout"]
    # No project named: the one the command runs in.
    assert run("group", "remove", "shop").exit_code == 0
    assert run.json("group", "show", "shop")["members"] == []


def test_bad_group_commands_say_what_is_wrong_in_one_sentence(
    family: dict[str, Path], run: Cli
) -> None:
    code, said = _fails(run, "group", "add", "warehouse", "loner")
    assert code == 3 and "No group named 'warehouse'" in said
    code, said = _fails(run, "group", "show", "warehouse")
    assert code == 3 and "group create" in said
    code, said = _fails(run, "group", "add", "shop", "checkout")
    assert code == 4 and "checkout is in group shop already" in said
    code, said = _fails(run, "group", "remove", "shop", "loner")
    assert code == 2 and "loner is not a member of group shop" in said
    code, said = _fails(run, "group", "create", "shop")
    assert code == 4 and "exists already" in said
    code, said = _fails(run, "group", "create", "checkout")  # a project's name
    assert code == 4
    run.json("group", "create", "Tools")
    code, said = _fails(run, "group", "add", "tools", "billing")
    assert code == 4 and "billing belongs to group shop" in said
    assert run.json("group", "show", "tools")["members"] == []


def test_a_group_record_is_written_from_a_member_only(family: dict[str, Path], run: Cli) -> None:
    written = run.json("add", LOGS, "--category", "convention", "--in-group")
    assert (
        written["group"] == "shop" and written["project_id"] != run.json("status")["project"]["id"]
    )
    text = run("add", EVERYWHERE, "--category", "convention", "--group", "shop").output
    assert "(group shop)" in text
    code, said = _fails(
        run, "add", OWN, "--category", "convention", "--group", "shop", "--project", "loner"
    )
    assert code == 4 and "loner is not a member of group shop" in said
    code, said = _fails(
        run, "add", OWN, "--category", "convention", "--in-group", "--project", "loner"
    )
    assert code == 2 and "loner belongs to no group" in said
    code, said = _fails(run, "add", OWN, "--category", "convention", "--group", "nowhere")
    assert code == 3
    code, said = _fails(run, "add", OWN, "--category", "convention", "--group", "shop", "--global")
    assert code == 2
    secret = "Deploys push with token ghp_" + "a1B2c3D4e5" * 4
    code, said = _fails(run, "add", secret, "--category", "gotcha", "--in-group")
    assert code == 2 and "a1B2c3D4e5" not in said
    assert run.json("group", "show", "shop")["active_records"] == 2


def test_members_see_group_records_between_their_own_and_global_ones(
    family: dict[str, Path], run: Cli
) -> None:
    group_id = run.json("add", LOGS, "--category", "convention", "--in-group")["id"]
    own_id = run.json("add", OWN, "--category", "convention")["id"]
    global_id = run.json("add", EVERYWHERE, "--category", "convention", "--global")["id"]
    hits = run.json("search", "logs JSON lines UTC", "--explain")["results"]
    assert {h["id"]: h["scope"] for h in hits} == {
        own_id: "project",
        group_id: "group",
        global_id: "global",
    }
    terms = {h["scope"]: h["explain"]["project_match"] for h in hits}
    assert terms["project"] > terms["group"] > terms["global"] == 0
    recalled = run.json("recall", "logs JSON lines", "--project", "billing")["context"]
    assert group_id in recalled and "· group]" in recalled
    loner = run.json("search", "logs JSON lines UTC", "--project", "loner")["results"]
    assert [h["id"] for h in loner] == [global_id]
    listed = {line.split()[0]: line for line in run("memories").output.splitlines()}
    assert " group " in listed["M1"] and " group " not in listed["M2"]  # in written order
    assert group_id not in {r["id"] for r in run.json("memories", "--project", "loner")["records"]}


def test_with_the_same_words_the_tier_alone_orders_them(family: dict[str, Path], run: Cli) -> None:
    """One text stored three times (--force): own, group, global; nothing but whose it is
    tells them apart, in search, in recall, with and without query words."""
    args = ("add", LOGS, "--category", "convention", "--force")
    global_id = run.json(*args, "--global")["id"]
    group_id = run.json(*args, "--in-group")["id"]
    own_id = run.json(*args)["id"]
    expected = [own_id, group_id, global_id]
    assert [h["id"] for h in run.json("search", "JSON lines stdout")["results"]] == expected
    assert [h["id"] for h in run.json("recall", "JSON lines stdout")["results"]] == expected
    assert [h["id"] for h in run.json("search", "", "--kind", "memory")["results"]] == expected
    billing = run.json("search", "JSON lines stdout", "--project", "billing")["results"]
    assert [h["id"] for h in billing] == [group_id, global_id]


def test_a_briefing_of_a_member_carries_the_group_below_its_own_records(
    family: dict[str, Path], run: Cli
) -> None:
    group_id = run.json("add", LOGS, "--category", "convention", "--in-group")["id"]
    global_id = run.json("add", EVERYWHERE, "--category", "convention", "--global")["id"]
    own_id = run.json("add", OWN, "--category", "convention")["id"]
    assert run("export", "generic").exit_code == 0
    text = (family["checkout"] / "CONTEXTD.md").read_text(encoding="utf-8")
    assert text.index(own_id) < text.index(group_id) < text.index(global_id)
    assert run("export", "generic", "--project", "loner").exit_code == 0
    lonely = (family["loner"] / "CONTEXTD.md").read_text(encoding="utf-8")
    assert global_id in lonely and group_id not in lonely


def test_status_and_inventory_show_membership(family: dict[str, Path], run: Cli) -> None:
    status = run.json("status")
    assert status["group"]["slug"] == "shop"
    assert "Group" in run("status").output and "shop" in run("status").output
    assert run.json("status", "--project", "loner")["group"] is None
    run.json("add", LOGS, "--category", "convention", "--in-group")
    survey = run.json("inventory")
    assert {p["slug"]: p["group"] for p in survey["projects"]} == {
        "billing": "shop",
        "checkout": "shop",
        "loner": None,
    }
    assert survey["groups"][0]["counts"]["total"] == 1 and survey["totals"]["total"] == 1
    assert "group shop: 1 record, applying to billing, checkout" in run("inventory").output


def test_a_renamed_group_keeps_its_members_and_records(family: dict[str, Path], run: Cli) -> None:
    group_id = run.json("add", LOGS, "--category", "convention", "--in-group")["id"]
    renamed = run.json("group", "rename", "shop", "Storefront")
    assert renamed["renamed_from"] == "shop"
    assert renamed["group"]["slug"] == "storefront" and renamed["group"]["name"] == "Storefront"
    assert [m["slug"] for m in renamed["group"]["members"]] == ["billing", "checkout"]
    assert run.json("group", "show", "storefront")["active_records"] == 1
    assert run.json("show", group_id)["group"] == "storefront"
    assert "group storefront" in run("show", group_id).output
    hits = run.json("search", "logs JSON lines", "--project", "billing")["results"]
    assert [(h["id"], h["scope"]) for h in hits] == [(group_id, "group")]
    again = run("group", "rename", "storefront", "StoreFront")  # its own slug clashes with nothing
    assert "Renamed group storefront to StoreFront (storefront)." in again.output
    code, said = _fails(run, "group", "rename", "storefront", "Loner")  # a project's slug
    assert code == 4 and "exists already" in said
    code, said = _fails(run, "group", "rename", "shop", "Anything")
    assert code == 3 and "No group named 'shop'" in said
    code, said = _fails(run, "group", "rename", "storefront", "two\nlines")
    assert code == 2


def test_a_deleted_group_leaves_its_members_in_none(family: dict[str, Path], run: Cli) -> None:
    out = run("group", "delete", "shop")
    assert out.exit_code == 0
    assert "Deleted group shop; its members (billing, checkout) are in no group now." in out.output
    assert run.json("group", "list")["groups"] == []
    assert run.json("status")["group"] is None
    assert run("group", "add", "shop", "checkout").exit_code == 3  # gone
    assert run.json("group", "create", "Shop")["group"]["slug"] == "shop"  # its name is free


def test_a_group_holding_records_is_deleted_only_with_purge(
    family: dict[str, Path], run: Cli
) -> None:
    group_id = run.json("add", LOGS, "--category", "convention", "--in-group")["id"]
    own_id = run.json("add", OWN, "--category", "convention")["id"]
    code, said = _fails(run, "group", "delete", "shop")
    assert code == 2 and "holds 1 record;" in said and "--purge" in said
    code, said = _fails(run, "group", "delete", "shop", "--purge")  # no terminal to ask
    assert code == 2 and "--yes" in said
    assert run.json("group", "show", "shop")["active_records"] == 1  # nothing deleted so far

    gone = run.json("group", "delete", "shop", "--purge", "--yes")

    assert gone["records_deleted"] == 1 and gone["deleted"]["slug"] == "shop"
    assert run("show", group_id).exit_code == 3
    hits = run.json("search", "logs JSON lines")["results"]
    assert [h["id"] for h in hits] == [own_id]
