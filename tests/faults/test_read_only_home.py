"""A home on a read-only filesystem is refused in one sentence, and nothing in it changes."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from contextd.app import open_app
from contextd.config import load_settings
from contextd.errors import StoreError
from contextd.models import Kind, MemoryBody, RecordDraft
from tests.conftest import Cli


def _read_only(home: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """Run `command` with `home` bind-mounted read-only, in a private mount namespace (the
    only way to make root see a read-only folder)."""
    script = f'mount --bind "{home}" "{home}" && mount -o remount,bind,ro "{home}" && ' + " ".join(
        f"'{part}'" for part in command
    )
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", script],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=os.environ.copy(),
        timeout=60,
        check=False,
    )


@pytest.mark.usefixtures("repo")
def test_a_read_only_home_is_refused_and_left_as_it_was(run: Cli, home: Path) -> None:
    if (
        shutil.which("unshare") is None
        or subprocess.run(["unshare", "-rm", "true"], capture_output=True, check=False).returncode
        != 0
    ):
        pytest.skip("this machine cannot make a private mount namespace (unshare -rm)")
    run.json("add", "Builds need Node 20 or newer on every runner", "--category", "gotcha")
    before = {p.name: p.read_bytes() for p in home.iterdir() if p.is_file()}
    done = _read_only(
        home,
        sys.executable,
        "-m",
        "contextd",
        "--project",
        "orbit",
        "add",
        "Deploys run from the release branch only",
        "--category",
        "convention",
    )
    assert done.returncode == 6
    assert done.stderr.startswith("Error: ") and done.stderr.count("\n") == 1
    assert "writable" in done.stderr and "Traceback" not in done.stderr
    after = {p.name: p.read_bytes() for p in home.iterdir() if p.is_file()}
    assert after == before
    assert len(run.json("memories")["records"]) == 1


def _can_mount_privately() -> bool:
    return (
        shutil.which("unshare") is not None
        and subprocess.run(["unshare", "-rm", "true"], capture_output=True, check=False).returncode
        == 0
    )


def _home_files(home: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in home.iterdir() if p.is_file()}


@pytest.mark.usefixtures("repo")
def test_a_bundle_is_exported_from_a_read_only_home(run: Cli, home: Path, tmp_path: Path) -> None:
    if not _can_mount_privately():
        pytest.skip("this machine cannot make a private mount namespace (unshare -rm)")
    run.json("add", "Builds need Node 20 or newer on every runner", "--category", "gotcha")
    run.json("add", "Deploys run from the release branch only", "--category", "convention")
    before = _home_files(home)
    out = tmp_path / "out.json"
    done = _read_only(
        home, sys.executable, "-m", "contextd", "bundle", "export", "--out", str(out), "--json"
    )
    assert done.returncode == 0, done.stderr
    assert (
        json.loads(done.stdout)["records"] == 2 and json.loads(done.stdout)["remembered"] is False
    )
    assert "read-only" in done.stderr and "sync conflicts" in done.stderr
    assert _home_files(home) == before  # nothing written, nothing created beside the store

    other = tmp_path / "other-home"
    other.mkdir()
    (other / "config.toml").write_text('[embeddings]\nprovider = "hashing"\n', encoding="utf-8")
    merged = run.json("--home", str(other), "bundle", "import", "--file", str(out))
    assert merged["added"] == 2


@pytest.mark.usefixtures("repo")
def test_a_read_only_store_exports_without_writing_a_byte(run: Cli, home: Path) -> None:
    """As root permission bits mean nothing, so this opens the store read-only directly: the
    export must run no write statement (SQLite refuses every one on this connection)."""
    run.json("add", "Builds need Node 20 or newer on every runner", "--category", "gotcha")
    before = _home_files(home)
    with open_app(load_settings(), read_only=True) as app:
        bundle = app.sync.export(remember=False)
        assert [r.record.title for r in bundle.records] == [
            "Builds need Node 20 or newer on every runner"
        ]
        with pytest.raises(StoreError, match="read-only"):
            app.sync.export()  # remembering is a write
        draft = RecordDraft(
            kind=Kind.MEMORY,
            title="Deploys run from the release branch only",
            body=MemoryBody(),
            category="convention",
        )
        with pytest.raises(StoreError, match="read-only"):
            app.records.create(draft, app.current_project())
    assert _home_files(home) == before


def test_a_read_only_open_of_a_missing_store_is_refused(home: Path) -> None:
    with (
        pytest.raises(StoreError, match="no contextd store"),
        open_app(load_settings(), read_only=True),
    ):
        pass
    assert not (home / "contextd.db").exists()


@pytest.mark.usefixtures("repo")
def test_the_daemon_does_not_start_in_a_read_only_home(run: Cli, home: Path) -> None:
    if not _can_mount_privately():
        pytest.skip("this machine cannot make a private mount namespace (unshare -rm)")
    run.json("add", "Builds need Node 20 or newer on every runner", "--category", "gotcha")
    before = _home_files(home)
    done = _read_only(home, sys.executable, "-m", "contextd", "daemon", "start")
    assert done.returncode == 5, done.stderr
    assert done.stderr == (
        f"Error: {home} is read-only, and the daemon keeps its lock and socket record there; "
        "commands and hooks work without it.\n"
    )
    assert _home_files(home) == before
