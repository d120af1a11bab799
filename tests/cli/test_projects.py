"""init, attach, detach and project resolution through the CLI."""

from pathlib import Path

import pytest

from tests.conftest import DECISION, Cli, make_repo


def test_init_creates_home_config_and_database_and_is_idempotent(run: Cli, home: Path) -> None:
    (home / "config.toml").unlink()
    home.rmdir()
    first = run.json("init")
    assert first["created_config"] is True
    assert (home / "config.toml").is_file() and (home / "contextd.db").is_file()
    (home / "config.toml").write_text("[search]\nfts_weight = 2.0\n", encoding="utf-8")
    second = run.json("init")
    assert second["created_config"] is False
    assert (home / "config.toml").read_text(encoding="utf-8") == "[search]\nfts_weight = 2.0\n"


def test_attach_uses_the_git_root_name_and_normalised_remote(
    run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(tmp_path / "Orbit", "git@github.com:Acme/Orbit.git")
    (root / "src" / "deep").mkdir(parents=True)
    monkeypatch.chdir(root / "src" / "deep")
    out = run.json("attach")
    assert out["action"] == "created"
    assert out["path"] == str(root.resolve())
    assert out["project"]["name"] == "Orbit"
    assert out["project"]["slug"] == "orbit"
    assert out["project"]["git_remote"] == "github.com/acme/orbit"


def test_attach_twice_is_idempotent(run: Cli, repo: Path) -> None:
    again = run.json("attach")
    assert again["action"] == "already attached"
    assert len(run.json("memories")["records"]) == 0


def test_a_clone_with_the_https_form_of_the_same_remote_adopts_the_project(
    run: Cli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = run.json(*DECISION)
    clone = make_repo(tmp_path / "elsewhere" / "orbit-copy", "https://github.com/acme/orbit.git")
    monkeypatch.chdir(clone)
    out = run.json("attach")
    assert out["action"] == "adopted"
    assert sorted(out["project"]["paths"]) == sorted([str(repo.resolve()), str(clone.resolve())])
    assert [r["id"] for r in run.json("memories")["records"]] == [first["id"]]


def test_two_folders_with_the_same_name_get_distinct_slugs(
    run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slugs = []
    for parent in ("a", "b"):
        folder = tmp_path / parent / "api"
        folder.mkdir(parents=True)
        monkeypatch.chdir(folder)
        slugs.append(run.json("attach")["project"]["slug"])
    assert slugs == ["api", "api-2"]


def test_a_folder_outside_git_is_attached_as_it_is(
    run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / "notes"
    plain.mkdir()
    out = run.json("attach", str(plain))
    assert out["path"] == str(plain.resolve())
    assert out["project"]["git_remote"] is None


def test_the_deepest_attached_folder_wins(
    run: Cli, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inner = make_repo(repo / "vendor" / "billing")  # a nested repository of its own
    run.json("attach", str(inner))
    (inner / "src").mkdir()
    monkeypatch.chdir(inner / "src")
    assert run.json("status")["project"]["name"] == "billing"
    monkeypatch.chdir(repo)
    assert run.json("status")["project"]["name"] == "orbit"


def test_project_option_and_environment_override_the_folder(
    run: Cli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "sable"
    other.mkdir()
    run.json("attach", str(other))
    assert run.json("status", "--project", "sable")["project"]["slug"] == "sable"
    monkeypatch.setenv("CONTEXTD_PROJECT", "sable")
    assert run.json("status")["project"]["slug"] == "sable"
    assert run.json("--project", "orbit", "status")["project"]["slug"] == "orbit"


def test_an_unattached_folder_is_a_clear_error_naming_attach(
    run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    monkeypatch.chdir(loose)
    result = run("add", "The build needs Node 20 or newer", "--category", "gotcha")
    assert result.exit_code == 3
    assert "contextd attach" in result.stderr
    assert "Traceback" not in result.output
    assert result.stderr.count("\n") == 1


def test_an_unknown_project_name_lists_the_known_ones(run: Cli, repo: Path) -> None:
    result = run("status", "--project", "nope")
    assert result.exit_code == 3
    assert "No project named 'nope'" in result.stderr and "orbit" in result.stderr


def test_no_project_is_created_implicitly(
    run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run("memories")
    run("add", "The build needs Node 20 or newer", "--category", "gotcha")
    run.json("init")
    result = run("status", "--project", "anything")
    assert result.exit_code == 3
    assert "known: none yet" in result.stderr


def test_detach_unlinks_the_folder_but_keeps_the_records(
    run: Cli, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = run.json(*DECISION)
    out = run.json("detach")
    assert out["detached_path"] == str(repo.resolve())
    assert run("status").exit_code == 3
    assert run.json("show", record["id"], "--project", "orbit")["id"] == record["id"]
    assert run.json("attach")["action"] == "adopted"  # same remote: the project comes back


def _second_checkout(run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    clone = make_repo(tmp_path / "elsewhere" / "orbit-copy", "https://github.com/acme/orbit.git")
    monkeypatch.chdir(clone)
    assert run.json("attach")["action"] == "adopted"
    monkeypatch.chdir(tmp_path)
    return clone


def test_detach_from_outside_needs_a_folder_or_all(
    run: Cli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clone = _second_checkout(run, tmp_path, monkeypatch)
    refused = run("detach", "--project", "orbit")
    assert refused.exit_code == 2
    assert f"{Path.cwd()} is not inside the folders of orbit" in refused.stderr
    assert "contextd detach PATH" in refused.stderr and "--all" in refused.stderr
    assert str(repo.resolve()) in refused.stderr and str(clone.resolve()) in refused.stderr
    paths = run.json("status", "--project", "orbit")["project"]["paths"]
    assert sorted(paths) == sorted([str(repo.resolve()), str(clone.resolve())])  # nothing lost

    one = run.json("detach", str(clone), "--project", "orbit")
    assert one["detached_paths"] == [str(clone.resolve())]
    assert run.json("status", "--project", "orbit")["project"]["paths"] == [str(repo.resolve())]


def test_detach_a_folder_by_path_resolves_its_project(
    run: Cli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _second_checkout(run, tmp_path, monkeypatch)
    out = run.json("detach", str(repo / "."))
    assert out["project"]["slug"] == "orbit" and out["detached_paths"] == [str(repo.resolve())]


def test_detach_all_unlinks_every_folder(
    run: Cli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clone = _second_checkout(run, tmp_path, monkeypatch)
    out = run.json("detach", "--all", "--project", "orbit")
    assert sorted(out["detached_paths"]) == sorted([str(repo.resolve()), str(clone.resolve())])
    assert run.json("status", "--project", "orbit")["project"]["paths"] == []
    again = run("detach", "--all", "--project", "orbit")
    assert again.exit_code == 2 and "no folder attached on this machine" in again.stderr


def test_detach_refuses_a_folder_of_another_project_and_path_with_all(
    run: Cli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = make_repo(tmp_path / "sable")
    monkeypatch.chdir(other)
    run.json("attach")
    wrong = run("detach", str(repo), "--project", "sable")
    assert wrong.exit_code == 2
    assert f"{repo.resolve()} is not inside the folders of sable" in wrong.stderr
    both = run("detach", str(other), "--all")
    assert both.exit_code == 2 and "not both" in both.stderr
    assert run.json("status")["project"]["paths"] == [str(other.resolve())]


def test_detach_purge_needs_confirmation_without_a_terminal(run: Cli, repo: Path) -> None:
    run.json(*DECISION)
    refused = run("detach", "--purge")
    assert refused.exit_code == 2
    assert "--yes" in refused.stderr
    purged = run.json("detach", "--purge", "--yes")
    assert purged["records_deleted"] == 1
    assert run("status", "--project", "orbit").exit_code == 3


def test_home_option_points_at_another_store(run: Cli, repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-home"
    run.json(*DECISION)
    assert run.json("--home", str(other), "init")["home"] == str(other)
    assert run("memories", "--home", str(other)).exit_code == 3  # no project there


def test_attach_again_with_a_name_renames_the_project_but_keeps_its_slug(
    run: Cli, repo: Path
) -> None:
    slug = run.json("status")["project"]["slug"]
    out = run.json("attach", "--name", "Orbit API")
    assert out["action"] == "already attached" and out["renamed_from"] == "orbit"
    assert out["project"]["name"] == "Orbit API" and out["project"]["slug"] == slug
    assert run.json("memories", "--project", "Orbit API")["records"] == []  # found by its name
    said = run("attach", "--name", "Orbit API").output
    assert "Already attached:" in said and "Renamed" not in said  # the same name: nothing to do
    assert run.json("attach")["renamed_from"] is None  # no name: the name stays
    assert run.json("status")["project"]["name"] == "Orbit API"
    bad = run("attach", "--name", "two\nlines")
    assert bad.exit_code == 2 and "Traceback" not in bad.output
