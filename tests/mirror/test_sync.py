"""`contextd sync`: the Markdown mirror regenerated from the store, hand edits detected."""

import json
import re
from pathlib import Path

import pytest

from tests.conftest import DECISION, POSTGRES, Cli, make_repo

PIPELINE = [
    "pipeline",
    "Release",
    "--purpose",
    "Ship a tagged build to production safely",
    "--step",
    "run the test suite",
    "--step",
    "tag vX.Y.Z",
]


def test_sync_writes_the_layout_with_a_marker_per_record(home: Path, repo: Path, run: Cli) -> None:
    decision = run.json(*DECISION)["id"]
    constraint = run.json(
        "constrain",
        "Never edit an applied migration",
        "--hardness",
        "absolute",
        "--reason",
        "Applied migrations are checksummed in production; an edit breaks the next deploy",
        "--scope",
        "migrations/**",
    )["id"]
    arch = run.json(
        "add", "Workers talk to the coordinator over NATS", "--category", "architecture"
    )
    pipeline = run.json(*PIPELINE)["id"]
    checkpoint = run.json("checkpoint", "worker heartbeat completed", "--next", "leases")
    glob = run.json("add", "Prefer small pull requests everywhere", "--category", "preference",
                    "--global")["id"]  # fmt: skip
    out = run.json("sync")
    folder = home / "projects" / "orbit"
    day = checkpoint["created_at"][:10]
    expected = {"overview.md", "architecture.md", "decisions.md", "tasks.md"}
    assert {p.name for p in folder.glob("*.md")} == expected
    assert [p.name for p in (folder / "checkpoints").glob("*.md")] == [
        f"{day}-{checkpoint['id'][-12:]}.md"
    ]
    marker = "<!-- contextd:record {} -->"
    assert marker.format(decision) in (folder / "decisions.md").read_text(encoding="utf-8")
    assert marker.format(constraint) in (folder / "overview.md").read_text(encoding="utf-8")
    assert marker.format(arch["id"]) in (folder / "architecture.md").read_text(encoding="utf-8")
    assert marker.format(pipeline) in (folder / "tasks.md").read_text(encoding="utf-8")
    assert marker.format(glob) in (home / "global" / "overview.md").read_text(encoding="utf-8")
    assert marker.format(glob) not in (folder / "overview.md").read_text(encoding="utf-8")
    assert "projects/orbit/decisions.md" in out["written"]
    assert (folder / ".manifest.json").is_file()


def test_a_second_sync_writes_nothing_and_a_store_change_is_written(
    home: Path, repo: Path, run: Cli
) -> None:
    old = run.json(*DECISION)["id"]
    run.json("sync")
    again = run.json("sync")
    assert again["written"] == [] and again["edited"] == []
    new = run.json(*POSTGRES)["id"]
    run.json("supersede", old, "--by", new)
    third = run.json("sync")
    assert third["written"] == ["projects/orbit/decisions.md"]
    text = (home / "projects" / "orbit" / "decisions.md").read_text(encoding="utf-8")
    assert new in text and old not in text  # superseded records are not mirrored


def test_an_archived_checkpoint_file_is_removed(home: Path, repo: Path, run: Cli) -> None:
    checkpoint = run.json("checkpoint", "worker heartbeat completed")["id"]
    run.json("sync")
    run.json("archive", checkpoint)
    out = run.json("sync")
    assert len(out["removed"]) == 1
    assert list((home / "projects" / "orbit" / "checkpoints").glob("*.md")) == []


def test_sync_refuses_to_overwrite_a_hand_edited_file_and_names_adopt_and_force(
    home: Path, repo: Path, run: Cli
) -> None:
    run.json(*DECISION)
    run.json("sync")
    decisions = home / "projects" / "orbit" / "decisions.md"
    edited = decisions.read_text(encoding="utf-8").replace("acks and replay", "acks, replay")
    decisions.write_text(edited, encoding="utf-8")
    run.json("add", "Workers talk to the coordinator over NATS", "--category", "architecture")
    refused = run("sync")
    assert refused.exit_code == 4
    assert "--adopt" in refused.stderr and "--force" in refused.stderr
    assert "projects/orbit/decisions.md" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert decisions.read_text(encoding="utf-8") == edited
    # the rest of the mirror is still brought up to date
    arch = (home / "projects" / "orbit" / "architecture.md").read_text(encoding="utf-8")
    assert "over NATS" in arch
    assert run("sync").exit_code == 4  # still edited: still refused
    forced = run.json("sync", "--force")
    assert forced["written"] == ["projects/orbit/decisions.md"]
    assert "acks and replay" in decisions.read_text(encoding="utf-8")
    assert run("sync").exit_code == 0


def test_a_deleted_or_added_file_counts_as_a_hand_edit(home: Path, repo: Path, run: Cli) -> None:
    run.json(*DECISION)
    run.json("sync")
    folder = home / "projects" / "orbit"
    (folder / "tasks.md").unlink()
    result = run("sync")
    assert result.exit_code == 4 and "tasks.md" in result.stderr
    assert not (folder / "tasks.md").exists()
    run.json("sync", "--force")
    (folder / "checkpoints").mkdir(exist_ok=True)
    (folder / "checkpoints" / "mine.md").write_text("### notes\n", encoding="utf-8")
    result = run("sync")
    assert result.exit_code == 4 and "checkpoints/mine.md" in result.stderr


def test_dry_run_reports_and_writes_nothing(home: Path, repo: Path, run: Cli) -> None:
    run.json(*DECISION)
    out = run.json("sync", "--dry-run")
    assert out["dry_run"] and "projects/orbit/decisions.md" in out["written"]
    assert not (home / "projects").exists() and not (home / "global").exists()


def test_a_missing_or_corrupt_manifest_never_loses_a_hand_edit(
    home: Path, repo: Path, run: Cli
) -> None:
    run.json(*DECISION)
    run.json("sync")
    folder = home / "projects" / "orbit"
    (folder / ".manifest.json").write_text("{not json", encoding="utf-8")
    assert run("sync").exit_code == 0  # the files still match the store: nothing to protect
    decisions = folder / "decisions.md"
    decisions.write_text(decisions.read_text(encoding="utf-8") + "\nmy note\n", encoding="utf-8")
    (folder / ".manifest.json").unlink()
    assert run("sync").exit_code == 4
    assert "my note" in decisions.read_text(encoding="utf-8")


def test_sync_is_a_group_that_takes_subcommands() -> None:
    from contextd.cli.sync import sync

    assert sync.invoke_without_command and hasattr(sync, "add_command")


def test_the_manifest_records_each_files_hash(home: Path, repo: Path, run: Cli) -> None:
    record = run.json(*DECISION)["id"]
    run.json("sync")
    manifest = json.loads((home / "projects" / "orbit" / ".manifest.json").read_text("utf-8"))
    assert set(manifest["files"]) == {"overview.md", "architecture.md", "decisions.md", "tasks.md"}
    assert list(manifest["sections"]["decisions.md"]) == [record]
    assert all(re.fullmatch(r"[0-9a-f]{64}", h) for h in manifest["files"].values())


def _two_projects(tmp_path: Path, run: Cli) -> Path:
    """orbit (the current folder, with a decision), atlas (with a note) and a global record."""
    run.json(*DECISION)
    atlas = make_repo(tmp_path / "atlas", "git@github.com:acme/atlas.git")
    run.json("attach", str(atlas))
    run.json("--project", "atlas", "add", "Atlas tiles are cached for a day", "--category",
             "gotcha")  # fmt: skip
    run.json("add", "Prefer small pull requests everywhere", "--category", "preference",
             "--global")  # fmt: skip
    return atlas


def test_sync_with_a_project_regenerates_only_its_folder_and_global(
    home: Path, repo: Path, run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _two_projects(tmp_path, run)
    out = run.json("sync", "--project", "orbit")
    folders = {path.rsplit("/", 1)[0] for path in out["written"]}
    assert folders == {"projects/orbit", "global"}
    assert not (home / "projects" / "atlas").exists()

    monkeypatch.setenv("CONTEXTD_PROJECT", "atlas")
    out = run.json("sync")
    assert {path.rsplit("/", 1)[0] for path in out["written"]} == {"projects/atlas"}
    monkeypatch.delenv("CONTEXTD_PROJECT")
    assert run.json("sync")["written"] == []  # no option: every folder, as before


def test_a_project_limited_sync_and_adopt_leave_other_projects_edits_alone(
    home: Path, repo: Path, run: Cli, tmp_path: Path
) -> None:
    _two_projects(tmp_path, run)
    run.json("sync")
    atlas_overview = home / "projects" / "atlas" / "overview.md"
    atlas_overview.write_text(
        atlas_overview.read_text(encoding="utf-8").replace("for a day", "for a week"),
        encoding="utf-8",
    )
    orbit_decisions = home / "projects" / "orbit" / "decisions.md"
    orbit_decisions.write_text(
        orbit_decisions.read_text(encoding="utf-8").replace("acks and replay", "acks, replay"),
        encoding="utf-8",
    )
    assert run("sync", "--project", "atlas").exit_code == 4  # its own edit still counts
    out = run.json("sync", "--project", "orbit", "--adopt", "--yes")
    assert [(c["action"], c["folder"]) for c in out["changes"]] == [("update", "projects/orbit")]
    assert "for a week" in atlas_overview.read_text(encoding="utf-8")  # not adopted, not undone
    atlas = run.json("--project", "atlas", "memories")["records"]
    assert any(r["title"] == "Atlas tiles are cached for a day" for r in atlas)
    result = run("sync")
    assert result.exit_code == 4 and "projects/atlas/overview.md" in result.stderr


def test_sync_with_an_unknown_project_is_refused(
    home: Path, repo: Path, run: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    run.json(*DECISION)
    for args in (["sync", "--project", "nowhere"], ["sync", "--project", "nowhere", "--adopt"]):
        result = run(*args)
        assert result.exit_code == 3
        assert "contextd attach" in result.stderr and result.stderr.count("\n") == 1
    monkeypatch.setenv("CONTEXTD_PROJECT", "nowhere")
    result = run("sync")
    assert result.exit_code == 3 and "contextd attach" in result.stderr
    assert not (home / "projects").exists()


def test_a_stored_checkpoint_id_or_manifest_entry_cannot_lead_outside_the_folder(
    home: Path, repo: Path, run: Cli, tmp_path: Path
) -> None:
    """Ids and names that reached the store or the manifest before they were checked: the
    mirror refuses to follow them out of its folder, and writes nothing there."""
    import sqlite3

    checkpoint = run.json("checkpoint", "Queue work paused for the release")["id"]
    assert run("sync").exit_code == 0
    folder = home / "projects" / "orbit"
    manifest = json.loads((folder / ".manifest.json").read_text(encoding="utf-8"))
    manifest["files"]["../../../escaped.md"] = "0" * 64
    (folder / ".manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    result = run("sync", "--force")
    assert result.exit_code == 0, result.output
    assert not (home.parent / "escaped.md").exists()
    with sqlite3.connect(home / "contextd.db") as conn:
        conn.execute(
            "UPDATE records SET id = ?, created_at = ? WHERE id = ?",
            ("ckpt/../../../zz", "2026-01-01/../../x", checkpoint),
        )
    conn.close()
    escaped = run("sync", "--force")
    assert escaped.exit_code == 2 and "outside" in escaped.stderr
    assert not list(home.glob("projects/*.md")) and not (home / "zz.md").exists()
