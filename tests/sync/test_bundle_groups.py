"""Project groups between stores: a bundle carries each group, its members and its records;
the newer version of a group decides the membership of the projects a bundle names."""

import json
from pathlib import Path

from tests.sync.conftest import Machine, add_remote
from tests.sync.sshd import SshServer

CONVENTION = "Every service writes its logs as JSON lines to stdout for the collector"
OWN = "Orbit keeps its task queue in NATS JetStream with durable consumers"


def _shop(machine: Machine, tmp_path: Path) -> str:
    """orbit and comet attached, both in group `shop`, which holds one convention."""
    machine.attach(tmp_path / "lab" / "orbit")
    machine.attach(tmp_path / "lab" / "comet", "git@github.com:acme/comet.git")
    machine.json("group", "create", "Shop")
    assert machine("group", "add", "shop", "orbit", "comet").exit_code == 0
    written = machine.json(
        "add", CONVENTION, "--category", "convention", "--in-group", "--project", "orbit"
    )
    machine.note(OWN)
    return str(written["id"])


def _carry(source: Machine, target: Machine, path: Path, *flags: str) -> dict[str, object]:
    assert source("bundle", "export", "--out", str(path), *flags).exit_code == 0
    report: dict[str, object] = target.json("bundle", "import", "--file", str(path))
    return report


def _members(machine: Machine) -> dict[str, list[str]]:
    return {
        g["slug"]: [m["slug"] for m in g["members"]]
        for g in machine.json("group", "list")["groups"]
    }


def test_a_group_travels_with_its_members_and_records(
    laptop: Machine, lab: Machine, tmp_path: Path
) -> None:
    convention = _shop(lab, tmp_path)
    bundle = tmp_path / "shop.json"
    first = _carry(lab, laptop, bundle)
    document = json.loads(bundle.read_text(encoding="utf-8"))
    assert document["version"] == 2 and [g["slug"] for g in document["groups"]] == ["shop"]
    assert first["groups_created"] == ["shop"] and first["added"] == 2
    assert _members(laptop) == {"shop": ["comet", "orbit"]}
    hits = laptop.json("search", "JSON lines stdout", "--project", "comet")["results"]
    assert [(h["id"], h["scope"]) for h in hits] == [(convention, "group")]
    again = _carry(lab, laptop, bundle)
    assert (again["added"], again["updated"], again["unchanged"]) == (0, 0, 2)
    assert again["groups_created"] == [] and again["members_changed"] == 0


def test_a_bundle_without_groups_stays_version_1(lab: Machine, tmp_path: Path) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    lab.note(OWN)
    path = tmp_path / "plain.json"
    assert lab("bundle", "export", "--out", str(path)).exit_code == 0
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["version"] == 1 and "groups" not in document


def test_leaving_a_group_travels_with_the_newer_group(
    laptop: Machine, lab: Machine, tmp_path: Path
) -> None:
    _shop(lab, tmp_path)
    _carry(lab, laptop, tmp_path / "one.json")
    assert lab("group", "remove", "shop", "comet").exit_code == 0
    moved = _carry(lab, laptop, tmp_path / "two.json")
    assert moved["members_changed"] == 1
    assert _members(laptop) == {"shop": ["orbit"]}
    # Back the other way, the laptop's older copy does not undo it.
    back = _carry(laptop, lab, tmp_path / "three.json")
    assert back["members_changed"] == 0 and _members(lab) == {"shop": ["orbit"]}


def test_a_one_project_export_carries_its_group_and_only_its_own_membership(
    laptop: Machine, lab: Machine, tmp_path: Path
) -> None:
    convention = _shop(lab, tmp_path)
    lab.note("Comet renders its dashboards with Vega-Lite specs from the API", project="comet")
    report = _carry(lab, laptop, tmp_path / "orbit.json", "--project", "orbit")
    assert report["added"] == 2  # orbit's own record and the group's, not comet's
    assert _members(laptop) == {"shop": ["orbit"]}
    assert convention in laptop.records("orbit")


def test_a_group_naming_a_member_the_bundle_does_not_list_is_refused(
    laptop: Machine, lab: Machine, tmp_path: Path
) -> None:
    _shop(lab, tmp_path)
    path = tmp_path / "bad.json"
    assert lab("bundle", "export", "--out", str(path)).exit_code == 0
    document = json.loads(path.read_text(encoding="utf-8"))
    document["groups"][0]["members"].append("01a23786-0000-7000-8000-00000000dead")
    path.write_text(json.dumps(document), encoding="utf-8")
    result = laptop("bundle", "import", "--file", str(path))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "names a member project the bundle does not list" in result.stderr
    assert "nothing was imported" in result.stderr
    assert laptop.json("group", "list")["groups"] == []


def test_a_pull_over_ssh_brings_the_group(
    laptop: Machine, lab: Machine, sshd: SshServer, tmp_path: Path
) -> None:
    convention = _shop(lab, tmp_path)
    add_remote(laptop, "lab", lab, sshd)
    pulled = laptop.json("remote", "pull", "lab")
    assert pulled["added"] == 2 and pulled["groups_created"] == ["shop"]
    assert _members(laptop) == {"shop": ["comet", "orbit"]}
    assert convention in laptop.records("comet")
