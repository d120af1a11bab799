"""`contextd sync`: the Markdown mirror regenerated from the store, hand edits detected."""

import json
import re
from pathlib import Path

from tests.conftest import DECISION, POSTGRES, Cli

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
