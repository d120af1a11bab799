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


def test_a_home_open_to_others_is_closed_when_opened(
    home: Path, repo: Path, loose_umask: None
) -> None:
    (home / "projects" / "orbit").mkdir(parents=True)
    (home / "projects" / "orbit" / "decisions.md").write_text("# notes\n", encoding="utf-8")
    (home / "config.toml").chmod(0o644)
    home.chmod(0o755)
    (home / "projects").chmod(0o755)
    result = CliRunner().invoke(cli, ["memories"])
    assert result.exit_code == 0, result.output
    assert (
        f"Note: {home} was readable by other users (mode 755); contextd made it and the "
        in result.stderr
    )
    assert result.stderr.count("\n") == 1  # one line
    assert {name: mode & 0o077 for name, mode in _modes(home).items()} == dict.fromkeys(
        _modes(home), 0
    )
    again = CliRunner().invoke(cli, ["memories"])
    assert again.exit_code == 0 and again.stderr == ""
