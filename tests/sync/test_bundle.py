"""bundle export/import between stores on one disk: the merge rules without ssh."""

import json
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import DECISION, POSTGRES
from tests.sync.conftest import NOTES, Machine


def carry(source: Machine, target: Machine, tmp_path: Path, *flags: str) -> dict[str, object]:
    """Export from `source` and import into `target`; returns the import report."""
    path = tmp_path / "carry.json"
    assert source("bundle", "export", "--out", str(path)).exit_code == 0
    report: dict[str, object] = target.json("bundle", "import", "--file", str(path), *flags)
    return report


@pytest.fixture
def desk(tmp_path: Path) -> Machine:
    return Machine(tmp_path / "desk-home")


def test_import_adds_everything_and_a_second_import_changes_nothing(
    laptop: Machine, lab: Machine, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    ids = {lab.note(text) for text in NOTES[:3]}
    first = carry(lab, laptop, tmp_path)
    assert (first["added"], first["updated"], first["conflicts"]) == (3, 0, 0)
    assert first["projects_created"] == ["orbit"]
    assert set(laptop.records()) == ids
    second = carry(lab, laptop, tmp_path)
    assert (second["added"], second["updated"], second["unchanged"]) == (0, 0, 3)


def test_imported_records_are_searchable_by_words_and_by_meaning(
    laptop: Machine, lab: Machine, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    wanted = lab.note(NOTES[0])
    carry(lab, laptop, tmp_path)
    hits = laptop.json("search", "JetStream transport", "--project", "orbit", "--explain")[
        "results"
    ]
    assert hits and hits[0]["id"] == wanted
    assert hits[0]["explain"]["fts"] > 0 and hits[0]["explain"]["semantic"] > 0
    status = laptop.json("config", "--check")["check"]["index"]
    assert status["embedded"] == status["records"] == 1


def test_every_field_travels_with_supersede_links_and_relations(
    laptop: Machine, lab: Machine, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    old = lab.json(*DECISION, "--project", "orbit", "--tag", "queue", "--hint", "task bus")["id"]
    new = lab.json(*POSTGRES, "--project", "orbit", "--related", old, "--priority", "5")["id"]
    assert lab("supersede", old, "--by", new).exit_code == 0
    carry(lab, laptop, tmp_path)
    there, here = lab.records(), laptop.records()
    local_only = ("project_id", "session_id", "origin")
    for record_id in (old, new):
        mine = {k: v for k, v in here[record_id].items() if k not in local_only}
        theirs = {k: v for k, v in there[record_id].items() if k not in local_only}
        assert mine == theirs
        # What arrives in a bundle is trusted as an import, whatever the sender claims.
        assert (there[record_id]["origin"], here[record_id]["origin"]) == ("user", "import")
    assert here[old]["status"] == "superseded" and here[old]["superseded_by"] == new
    assert here[new]["related_to"] == [old]
    assert laptop.json("show", old)["successor"]["id"] == new


def test_links_moved_by_a_supersede_travel(laptop: Machine, lab: Machine, tmp_path: Path) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    old = lab.json(*DECISION, "--project", "orbit")["id"]
    rule = lab.json(
        "add", NOTES[0], "--category", "convention", "--related", old, "--project", "orbit"
    )["id"]
    carry(lab, laptop, tmp_path)
    new = lab.json(*POSTGRES, "--project", "orbit", "--supersedes", old)["id"]
    report = carry(lab, laptop, tmp_path)
    assert (report["added"], report["updated"], report["conflicts"]) == (1, 2, 0)
    assert laptop.records()[rule]["related_to"] == [new]


def test_the_newer_update_wins_in_either_direction(
    laptop: Machine, lab: Machine, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    record = lab.note(NOTES[0])
    carry(lab, laptop, tmp_path)
    assert lab("update", record, "--priority", "5").exit_code == 0
    report = carry(lab, laptop, tmp_path)
    assert (report["updated"], report["conflicts"]) == (1, 0)
    assert laptop.records()[record]["priority"] == 5
    assert laptop("update", record, "--tag", "transport").exit_code == 0
    back = carry(laptop, lab, tmp_path)
    assert back["updated"] == 1
    assert lab.records()[record]["tags"] == ["transport"]
    stale = carry(lab, laptop, tmp_path)  # lab now holds laptop's version: nothing to take
    assert (stale["updated"], stale["unchanged"]) == (0, 1)


def test_an_old_copy_does_not_overwrite_a_newer_one(
    laptop: Machine, lab: Machine, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    record = lab.note(NOTES[0])
    old_copy = tmp_path / "old.json"
    assert lab("bundle", "export", "--out", str(old_copy)).exit_code == 0
    carry(lab, laptop, tmp_path)
    assert laptop("update", record, "--priority", "1").exit_code == 0
    report = laptop.json("bundle", "import", "--file", str(old_copy))
    assert (report["updated"], report["kept_local"], report["conflicts"]) == (0, 1, 0)
    assert laptop.records()[record]["priority"] == 1


def test_both_sides_changed_keeps_the_local_copy_and_lists_it_until_settled(
    laptop: Machine, lab: Machine, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    record = lab.note(NOTES[0])
    carry(lab, laptop, tmp_path)
    assert lab("update", record, "--title", NOTES[0] + " (lab edit)").exit_code == 0
    assert laptop("update", record, "--title", NOTES[0] + " (laptop edit)").exit_code == 0
    report = carry(lab, laptop, tmp_path)
    assert (report["conflicts"], report["updated"], report["conflict_ids"]) == (1, 0, [record])
    assert laptop.records()[record]["title"].endswith("(laptop edit)")
    listed = laptop.json("sync", "conflicts")["conflicts"]
    assert [(c["id"], c["differing"]) for c in listed] == [(record, ["title"])]
    assert listed[0]["remote"]["title"].endswith("(lab edit)")
    again = carry(lab, laptop, tmp_path)  # still listed, still not resolved silently
    assert again["conflicts"] == 1
    assert laptop.records()[record]["title"].endswith("(laptop edit)")

    assert laptop("sync", "resolve", record, "--keep", "theirs").exit_code == 0
    assert laptop.records()[record]["title"].endswith("(lab edit)")
    assert laptop.json("sync", "conflicts")["conflicts"] == []
    settled = carry(lab, laptop, tmp_path)
    assert (settled["conflicts"], settled["unchanged"]) == (0, 1)


def test_keeping_the_local_copy_makes_it_win_on_the_other_side(
    laptop: Machine, lab: Machine, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    record = lab.note(NOTES[0])
    carry(lab, laptop, tmp_path)
    assert lab("update", record, "--priority", "1").exit_code == 0
    assert laptop("update", record, "--priority", "5").exit_code == 0
    assert carry(lab, laptop, tmp_path)["conflicts"] == 1
    assert laptop("sync", "resolve", record, "--keep", "local").exit_code == 0
    pushed = carry(laptop, lab, tmp_path)
    assert (pushed["updated"], pushed["conflicts"]) == (1, 0)
    assert lab.records()[record]["priority"] == 5


def test_a_deletion_travels_and_reaches_a_third_machine_through_the_second(
    laptop: Machine, lab: Machine, desk: Machine, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    doomed, kept = lab.note(NOTES[0]), lab.note(NOTES[1])
    carry(lab, laptop, tmp_path)
    carry(laptop, desk, tmp_path)
    assert lab("delete", doomed).exit_code == 0
    assert carry(lab, laptop, tmp_path)["deleted"] == 1
    assert set(laptop.records()) == {kept}
    assert carry(laptop, desk, tmp_path)["deleted"] == 1
    assert set(desk.records()) == {kept}
    # A machine that still had the record does not hand it back.
    assert carry(desk, lab, tmp_path)["added"] == 0
    assert set(lab.records()) == {kept}


def test_a_tombstone_loses_to_a_later_update(laptop: Machine, lab: Machine, tmp_path: Path) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    record = lab.note(NOTES[0])
    carry(lab, laptop, tmp_path)
    assert lab("delete", record).exit_code == 0
    assert laptop("update", record, "--priority", "4").exit_code == 0
    report = carry(lab, laptop, tmp_path)
    assert (report["deleted"], report["kept_local"]) == (0, 1)
    assert record in laptop.records()
    back = carry(laptop, lab, tmp_path)  # the later edit brings it back over there
    assert back["added"] == 1 and record in lab.records()


def test_refresh_forgets_tombstones_older_than_the_retention(
    laptop: Machine, lab: Machine, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    old, recent = lab.note(NOTES[0]), lab.note(NOTES[1])
    assert lab("delete", old).exit_code == 0 and lab("delete", recent).exit_code == 0
    with sqlite3.connect(lab.home / "contextd.db") as conn:
        conn.execute(
            "UPDATE tombstones SET deleted_at = '2020-01-01T00:00:00.000Z' WHERE id = ?", (old,)
        )
    assert lab.json("refresh")["tombstones_forgotten"] == 1
    path = tmp_path / "after.json"
    assert lab("bundle", "export", "--out", str(path)).exit_code == 0
    assert [t["id"] for t in json.loads(path.read_text(encoding="utf-8"))["tombstones"]] == [recent]
    (lab.home / "config.toml").write_text(
        '[embeddings]\nprovider = "hashing"\n[sync]\ntombstone_retention_days = 0\n',
        encoding="utf-8",
    )
    assert lab.json("refresh")["tombstones_forgotten"] == 1


def test_detach_purge_is_local_and_writes_no_tombstones(
    laptop: Machine, lab: Machine, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    ids = {lab.note(NOTES[0]), lab.note(NOTES[1])}
    carry(lab, laptop, tmp_path)
    assert laptop("detach", "--purge", "--yes", "--project", "orbit").exit_code == 0
    report = carry(laptop, lab, tmp_path)
    assert (report["deleted"], report["tombstones_received"]) == (0, 0)
    assert set(lab.records()) == ids


def test_projects_match_by_normalised_remote_then_slug_and_attach_adopts_an_arrival(
    laptop: Machine, lab: Machine, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit", "git@github.com:Acme/Orbit.git")
    mine = laptop.attach(tmp_path / "orbit-laptop", "https://github.com/acme/orbit")
    record = lab.note(NOTES[0])
    report = carry(lab, laptop, tmp_path)
    assert report["projects_created"] == []
    assert list(laptop.records(mine)) == [record]

    lab.attach(tmp_path / "sable", "git@github.com:acme/sable.git")
    other = lab.note(NOTES[1], project="sable")
    assert carry(lab, laptop, tmp_path)["projects_created"] == ["sable"]
    arrived = next(p for p in laptop.json("bundle", "summary")["projects"] if p["slug"] == "sable")
    assert arrived["git_remote"] == "github.com/acme/sable"
    adopted = laptop.attach(tmp_path / "sable-checkout", "https://github.com/acme/sable.git")
    assert adopted == "sable"
    assert list(laptop.records("sable")) == [other]


def test_export_of_one_project_since_a_date(laptop: Machine, tmp_path: Path) -> None:
    laptop.attach(tmp_path / "orbit")
    laptop.attach(tmp_path / "sable", "git@github.com:acme/sable.git")
    laptop.note(NOTES[0])
    wanted = laptop.note(NOTES[1], project="sable")
    path = tmp_path / "sable.json"
    result = laptop("bundle", "export", "--out", str(path), "--project", "sable", "--since", "1d")
    assert result.exit_code == 0, result.output
    document = json.loads(path.read_text(encoding="utf-8"))
    assert [r["id"] for r in document["records"]] == [wanted]
    assert [p["slug"] for p in document["projects"]] == ["sable"]
    assert "embedding" not in json.dumps(document) and "session" not in json.dumps(document)
    later = laptop("bundle", "export", "--out", str(path), "--since", "2999-01-01")
    assert later.exit_code == 0 and json.loads(path.read_text(encoding="utf-8"))["records"] == []


def test_dry_run_reports_but_writes_nothing(laptop: Machine, lab: Machine, tmp_path: Path) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    lab.note(NOTES[0])
    lab.note(NOTES[1])
    report = carry(lab, laptop, tmp_path, "--dry-run")
    assert (report["added"], report["dry_run"], report["projects_created"]) == (2, True, ["orbit"])
    summary = laptop.json("bundle", "summary")
    assert (summary["records"], summary["projects"]) == (0, [])


def test_stdin_and_stdout_carry_a_bundle(laptop: Machine, lab: Machine, tmp_path: Path) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    record = lab.note(NOTES[0])
    out = lab("bundle", "export", "--out", "-")
    assert out.exit_code == 0
    assert json.loads(out.stdout)["format"] == "contextd-bundle"
    report = laptop.json("bundle", "import", "--file", "-", input=out.stdout)
    assert report["added"] == 1 and record in laptop.records()


@pytest.mark.parametrize(
    ("content", "complaint"),
    [
        ('{"format": "contextd-bundle", "version": 1,', "is not valid JSON (line 1"),
        ('{"hello": "world"}', "is not a contextd bundle"),
        ("[1, 2]", "is not a contextd bundle"),
        ('{"format": "contextd-bundle", "version": 3}', "newer contextd (bundle version 3"),
        ('{"format": "contextd-bundle", "version": "1"}', "no valid bundle version"),
    ],
)
def test_a_malformed_foreign_or_newer_bundle_is_refused_in_one_sentence(
    laptop: Machine, tmp_path: Path, content: str, complaint: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    result = laptop("bundle", "import", "--file", str(path))
    assert result.exit_code == 2
    assert complaint in result.stderr and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_damaged_record_entry_is_named_and_nothing_is_imported(
    laptop: Machine, lab: Machine, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    lab.note(NOTES[0])
    lab.note(NOTES[1])
    path = tmp_path / "damaged.json"
    assert lab("bundle", "export", "--out", str(path)).exit_code == 0
    document = json.loads(path.read_text(encoding="utf-8"))
    document["records"][1]["kind"] = "rumour"
    path.write_text(json.dumps(document), encoding="utf-8")
    result = laptop("bundle", "import", "--file", str(path))
    assert result.exit_code == 2 and "record 2" in result.stderr
    document["records"][1]["kind"] = "memory"
    document["records"][1]["updated_at"] = "yesterday"
    path.write_text(json.dumps(document), encoding="utf-8")
    result = laptop("bundle", "import", "--file", str(path))
    assert result.exit_code == 2 and "not an ISO date" in result.stderr
    assert laptop.json("bundle", "summary")["records"] == 0


def test_missing_binary_and_own_bundles_are_refused(laptop: Machine, tmp_path: Path) -> None:
    missing = laptop("bundle", "import", "--file", str(tmp_path / "nope.json"))
    assert missing.exit_code == 2 and "No bundle at" in missing.stderr
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    assert "not UTF-8" in laptop("bundle", "import", "--file", str(binary)).stderr
    laptop.attach(tmp_path / "orbit")
    laptop.note(NOTES[0])
    own = tmp_path / "own.json"
    assert laptop("bundle", "export", "--out", str(own)).exit_code == 0
    result = laptop("bundle", "import", "--file", str(own))
    assert result.exit_code == 2 and "this very store" in result.stderr


def test_a_bad_since_or_unwritable_output_is_refused(laptop: Machine, tmp_path: Path) -> None:
    result = laptop("bundle", "export", "--out", str(tmp_path / "x.json"), "--since", "soon")
    assert result.exit_code == 2 and "--since 'soon' is not a date" in result.stderr
    result = laptop("bundle", "export", "--out", str(tmp_path / "no" / "such" / "x.json"))
    assert result.exit_code == 2 and "Cannot write" in result.stderr


def test_a_checkout_without_a_remote_adopts_the_arrived_project_by_name(
    laptop: Machine, lab: Machine, tmp_path: Path
) -> None:
    folder = tmp_path / "lab" / "notes"
    folder.mkdir(parents=True)
    assert lab("attach", str(folder)).exit_code == 0
    record = lab.note(NOTES[0], project="notes")
    assert carry(lab, laptop, tmp_path)["projects_created"] == ["notes"]
    checkout = tmp_path / "mine" / "notes"
    checkout.mkdir(parents=True)
    adopted = laptop.json("attach", str(checkout))
    assert (adopted["action"], adopted["project"]["slug"]) == ("adopted", "notes")
    assert list(laptop.records("notes")) == [record]
