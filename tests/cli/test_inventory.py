"""inventory: the survey of a whole store, across projects and global records."""

from pathlib import Path

import pytest

from tests.conftest import DECISION, POSTGRES, Cli, make_repo


def _two_projects(run: Cli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """orbit: 2 memories, 2 decisions (one superseded), 2 checkpoints, 1 archived memory;
    sable: 1 memory; global: 2 conventions and 1 constraint."""
    run.json("add", "GPU scheduler uses NATS for task transport", "--category", "architecture")
    old = run.json("add", "Workers poll the coordinator every second", "--category", "gotcha")
    run.json("archive", old["id"])
    run.json("add", "Logs go to stdout in JSON lines", "--category", "convention")
    nats = run.json(*DECISION)
    run.json(*POSTGRES, "--supersedes", nats["id"])
    run.json("checkpoint", "coordinator skeleton")
    run.json("checkpoint", "worker heartbeat completed")
    run.json("add", "Prefer small commits", "--category", "convention", "--global")
    run.json("add", "Squash merge feature branches", "--category", "convention", "--global")
    run.json(
        "constrain",
        "Never commit secrets to the repository",
        "--reason",
        "Secrets in git history leak to every clone and cannot be fully removed",
        "--hardness",
        "absolute",
        "--global",
    )
    sable = make_repo(tmp_path / "sable", "https://github.com/acme/sable.git")
    monkeypatch.chdir(sable)
    run.json("attach")
    run.json("add", "The parser is a hand-written Pratt parser", "--category", "architecture")


def test_counts_per_project_kind_status_and_global_categories(
    run: Cli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _two_projects(run, repo, tmp_path, monkeypatch)
    out = run.json("inventory")
    projects = {p["slug"]: p for p in out["projects"]}
    assert sorted(projects) == ["orbit", "sable"]
    orbit = projects["orbit"]["counts"]
    assert orbit["total"] == 7
    assert orbit["by_kind"] == {
        "memory": 3,
        "decision": 2,
        "constraint": 0,
        "pipeline": 0,
        "checkpoint": 2,
    }
    assert orbit["by_status"] == {"active": 5, "superseded": 1, "archived": 1}
    assert "by_kind_status" not in orbit and "paths" not in projects["orbit"]
    assert projects["orbit"]["last_checkpoint"]["title"] == "worker heartbeat completed"
    assert projects["sable"]["counts"]["total"] == 1
    assert projects["sable"]["last_checkpoint"] is None
    assert projects["sable"]["last_activity"] > projects["orbit"]["last_activity"]
    assert out["global"]["total"] == 3
    assert out["global"]["categories"] == {"convention": 2}
    assert out["global"]["by_kind"]["constraint"] == 1
    assert out["totals"]["total"] == 11
    assert out["totals"]["by_status"] == {"active": 9, "superseded": 1, "archived": 1}
    assert out["last_activity"] == projects["sable"]["last_activity"]
    assert out["embeddings"]["provider"].startswith("hashing")
    assert out["embeddings"]["vector_backend"] == "sqlite (exact numpy scan)"
    assert out["embeddings"]["embedded"] == out["embeddings"]["records"] == 11


def test_the_bundle_summary_tells_the_same_counts_as_the_inventory(
    run: Cli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _two_projects(run, repo, tmp_path, monkeypatch)
    survey = run.json("inventory")
    summary = run.json("bundle", "summary")
    assert summary["records"] == survey["totals"]["total"] == 11
    assert summary["last_activity"] == survey["last_activity"]
    orbit = next(p for p in summary["projects"] if p["slug"] == "orbit")
    assert orbit["kinds"] == {"memory": 3, "decision": 2, "checkpoint": 2}
    assert orbit["statuses"] == {"active": 5, "superseded": 1, "archived": 1}
    assert orbit["kinds_by_status"]["decision"] == {"active": 1, "superseded": 1}
    survey_orbit = next(p for p in survey["projects"] if p["slug"] == "orbit")
    # When the last checkpoint was made, not what it says: the summary leaves the machine.
    assert orbit["last_checkpoint"] == {"created_at": survey_orbit["last_checkpoint"]["created_at"]}
    assert "worker heartbeat" not in str(summary) and "categories" not in orbit
    assert summary["global"]["records"] == 3
    assert summary["global"]["categories"] == {"convention": 2, "constraint": 1}
    assert summary["embeddings"] == survey["embeddings"]["provider"]
    detail = run.json("bundle", "summary", "--detail")
    orbit = next(p for p in detail["projects"] if p["slug"] == "orbit")
    assert orbit["categories"] == {"architecture": 1, "convention": 1}  # active only


def test_the_summary_text_splits_current_from_superseded_without_any_record_text(
    run: Cli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _two_projects(run, repo, tmp_path, monkeypatch)
    text = run("bundle", "summary").output
    assert "Records        11 (9 current, 1 superseded, 1 archived)" in text
    assert "Decisions      2 (1 current, 1 superseded)" in text
    assert "Memories       6 (5 current, 1 archived)" in text
    orbit_row = next(line for line in text.splitlines() if line.startswith("orbit"))
    assert orbit_row.split()[:7] == ["orbit", "2", "1", "0", "0", "2", "2"]
    assert orbit_row.split()[-4:] == ["just", "now", "just", "now"]  # activity, checkpoint
    assert "plus 3 global records, applying to every project: 2 convention, 1 constraint" in text
    assert "categories" not in text
    detail = run("bundle", "summary", "--detail").output
    assert "  decision         2 (1 current, 1 superseded)" in detail
    assert "  categories       architecture 1, convention 1" in detail
    assert "  last checkpoint  just now" in detail
    for written in ("worker heartbeat", "coordinator skeleton", "NATS", "Pratt parser"):
        assert written not in text + detail


def test_detail_adds_breakdowns_and_paths(
    run: Cli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _two_projects(run, repo, tmp_path, monkeypatch)
    out = run.json("inventory", "--detail")
    orbit = next(p for p in out["projects"] if p["slug"] == "orbit")
    assert orbit["paths"] == [str(repo.resolve())]
    assert orbit["counts"]["by_kind_status"]["decision"] == {
        "active": 1,
        "superseded": 1,
        "archived": 0,
    }
    assert orbit["counts"]["by_kind_status"]["memory"]["archived"] == 1
    assert orbit["counts"]["categories"] == {"architecture": 1, "convention": 1}  # active only


def test_the_text_survey_names_projects_global_records_and_the_backend(
    run: Cli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _two_projects(run, repo, tmp_path, monkeypatch)
    text = run("inventory").output
    assert "Records        11 (9 current, 1 superseded, 1 archived)" in text
    assert "vectors in sqlite (exact numpy scan)" in text
    orbit_row = next(line for line in text.splitlines() if line.startswith("orbit"))
    assert orbit_row.split()[:7] == ["orbit", "2", "1", "0", "0", "2", "2"]
    assert "worker heartbeat completed" in orbit_row
    assert "plus 3 global records, applying to every project: 2 convention, 1 constraint" in text
    detail = run("inventory", "--detail").output
    assert f"  paths            {repo.resolve()}" in detail
    assert "  decision         2 (1 current, 1 superseded)" in detail
    assert "  categories       architecture 1, convention 1" in detail


def test_inventory_runs_outside_any_project(
    run: Cli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run.json("add", "GPU scheduler uses NATS for task transport", "--category", "architecture")
    monkeypatch.chdir(tmp_path)
    out = run.json("inventory")
    assert [p["slug"] for p in out["projects"]] == ["orbit"]


def test_an_empty_store(run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = run.json("inventory")
    assert out["projects"] == [] and out["totals"]["total"] == 0
    assert out["global"]["total"] == 0 and out["global"]["categories"] == {}
    assert out["last_activity"] is None
    text = run("inventory").output
    assert "none yet" in text and "No projects yet" in text and "no global records" in text


def test_a_project_with_no_records_has_no_activity(run: Cli, repo: Path) -> None:
    orbit = run.json("inventory")["projects"][0]
    assert orbit["counts"]["total"] == 0
    assert orbit["last_activity"] is None and orbit["last_checkpoint"] is None


def test_vectors_off_is_reported(run: Cli, repo: Path, home: Path) -> None:
    (home / "config.toml").write_text('[embeddings]\nprovider = "none"\n', encoding="utf-8")
    out = run.json("inventory")
    assert out["embeddings"]["provider"] == "none"
    assert out["embeddings"]["vector_backend"] == "none (full-text only)"
    assert "off (full-text only)" in run("inventory").output
