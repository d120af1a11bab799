"""The home and every file contextd writes in it are its user's alone, whatever the umask; a
home found open to others is closed, with a note."""

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from contextd.app import open_app
from contextd.cli.main import cli
from contextd.config import load_settings
from tests.conftest import DECISION
from tests.hooks._support import run_hook


@pytest.fixture
def loose_umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _modes(home: Path) -> dict[str, int]:
    return {
        str(path.relative_to(home)): stat.S_IMODE(path.lstat().st_mode)
        for path in [home, *home.rglob("*")]
    }


def test_everything_contextd_writes_in_the_home_is_private(
    tmp_path: Path, repo: Path, loose_umask: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "fresh-home"
    monkeypatch.setenv("CONTEXTD_HOME", str(home))
    runner = CliRunner()
    for args in (
        ["init"],
        ["config", "set", "embeddings.provider", "hashing"],
        ["attach", str(repo)],
        DECISION,
        ["sync"],  # the Markdown mirror
        ["search", "task queue"],
    ):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, (args, result.output)
    run_hook("prompt", raw=b"not json", cwd=repo, env={**os.environ})  # writes hook.log
    with open_app(load_settings()) as app:  # the -wal and -shm files exist while it is open
        app.reader.list_records(app.current_project())
        modes = _modes(home)
    assert modes.pop(".") == 0o700
    assert {"contextd.db", "contextd.db-wal", "contextd.db-shm", "config.toml", "hook.log"} <= set(
        modes
    )
    assert any(name.startswith("projects/") and name.endswith(".md") for name in modes)
    loose = {name: oct(mode) for name, mode in modes.items() if mode & 0o077}
    assert loose == {}


def test_an_open_contextd_home_has_its_folder_closed_and_nothing_under_it_changed(
    home: Path, repo: Path, loose_umask: None
) -> None:
    notes = home / "projects" / "orbit"
    notes.mkdir(parents=True)
    (notes / "decisions.md").write_text("# notes\n", encoding="utf-8")
    notes.chmod(0o755)
    (notes / "decisions.md").chmod(0o644)
    home.chmod(0o755)
    result = CliRunner().invoke(cli, ["memories"])
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        f"Note: {home} was open to other users (mode 755); contextd made the folder private "
        "to you.\n"
    )
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE(notes.stat().st_mode) == 0o755  # never walked
    assert stat.S_IMODE((notes / "decisions.md").stat().st_mode) == 0o644
    again = CliRunner().invoke(cli, ["memories"])
    assert again.exit_code == 0 and again.stderr == ""


def _website(root: Path) -> dict[str, int]:
    """A user's folder tree with ordinary 755/644 modes; its modes by path."""
    (root / "www" / "img").mkdir(parents=True)
    (root / "www" / "index.html").write_text("hi\n", encoding="utf-8")
    (root / "www" / "img" / "logo.svg").write_text("<svg/>\n", encoding="utf-8")
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return _modes(root)


@pytest.mark.parametrize("where", ["the folder", "its parent"])
def test_a_home_that_holds_other_files_is_refused_and_left_as_it_was(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    user_files = tmp_path / "d"
    user_files.mkdir()
    before = _website(user_files)
    home = user_files if where == "the folder" else tmp_path
    before_all = _modes(tmp_path)
    monkeypatch.setenv("CONTEXTD_HOME", str(home))
    for args in (["status"], ["init"], ["memories"], ["daemon", "start"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code != 0, (args, result.output)
        assert result.stderr == (
            f"Error: {home} holds files that are not contextd's, so it cannot be a contextd "
            f"home; give a folder of its own, such as {home / '.contextd'}, with --home or "
            "$CONTEXTD_HOME.\n"
        ), args
    run_hook("prompt", raw=b"not json", cwd=repo, env={**os.environ})
    assert _modes(user_files) == before
    assert _modes(tmp_path) == before_all  # nothing created, nothing changed
    suggested = CliRunner().invoke(cli, ["--home", str(home / ".contextd"), "init"])
    assert suggested.exit_code == 0, suggested.output
    after = _modes(user_files)
    assert {name: after[name] for name in before} == before


def test_an_empty_folder_is_adopted_as_a_home(
    tmp_path: Path, loose_umask: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "empty"
    home.mkdir(mode=0o755)
    monkeypatch.setenv("CONTEXTD_HOME", str(home))
    result = CliRunner().invoke(cli, ["init"])
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert (home / "config.toml").is_file()
