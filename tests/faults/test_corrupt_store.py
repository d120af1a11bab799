"""A store file that is garbage or damaged is refused through the CLI with exit 6 and one line
naming it, and is left byte for byte as it was."""

import os
import random
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

from click.testing import Result

from contextd.app import App
from contextd.models import Kind, MemoryBody, RecordDraft
from tests.conftest import Cli

ADD = ["add", "Run the database migrations before restarting the workers", "--category", "note"]


def _fill(app: App, count: int = 200) -> None:
    """A real store with enough records to span many pages, every connection closed."""
    project = app.current_project()
    layers = ["api", "database", "frontend", "operations"]
    drafts = [
        RecordDraft(
            kind=Kind.MEMORY,
            title=f"stored fact {i} about the {layers[i % 4]} layer of orbit",
            body=MemoryBody(),
            category="note",
        )
        for i in range(count)
    ]
    app.writer.create_many(drafts, project, force=True)
    app.db.close()
    assert not app.settings.db_path.with_name("contextd.db-wal").exists()


def _assert_refused(result: Result, db_path: Path) -> str:
    assert result.exit_code == 6, (result.exit_code, result.output)
    assert "Traceback" not in result.output
    assert result.stdout == ""
    lines = result.stderr.removesuffix("\n").split("\n")
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert str(db_path) in lines[0]
    return lines[0]


def test_a_garbage_file_at_the_store_path_is_refused_by_memories_and_add(
    repo: Path, home: Path, run: Cli
) -> None:
    db_path = home / "contextd.db"
    garbage = random.Random(7).randbytes(64 * 1024)
    db_path.write_bytes(garbage)

    for args in (["memories"], ADD):
        message = _assert_refused(run(*args), db_path)
        assert "not an SQLite file" in message
        assert db_path.read_bytes() == garbage
    assert sorted(p.name for p in home.iterdir()) == ["config.toml", "contextd.db"]


def test_a_garbage_file_is_refused_by_the_real_command_too(repo: Path, home: Path) -> None:
    db_path = home / "contextd.db"
    garbage = b"this is not a database, it is a grocery list\n" * 100
    db_path.write_bytes(garbage)

    result = subprocess.run(
        [sys.executable, "-m", "contextd", *ADD],
        cwd=repo,
        env={**os.environ, "CONTEXTD_HOME": str(home)},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )

    assert result.returncode == 6, result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"Error: {db_path} is not a contextd database")
    assert db_path.read_bytes() == garbage


def test_a_store_truncated_to_half_its_size_is_refused_and_left_untouched(
    app: App, home: Path, run: Cli, tmp_path: Path
) -> None:
    db_path = app.settings.db_path
    _fill(app)
    copy = tmp_path / "copy.db"
    shutil.copyfile(db_path, copy)
    with copy.open("r+b") as handle:
        handle.truncate(copy.stat().st_size // 2)
    shutil.copyfile(copy, db_path)
    damaged = db_path.read_bytes()

    for args in (["memories"], ADD, ["search", "orbit layer"]):
        message = _assert_refused(run(*args), db_path)
        assert "damaged" in message
        assert db_path.read_bytes() == damaged


def _damage_page(db_path: Path, table: str) -> None:
    """Overwrite the root page of `table` with junk: the header and schema stay readable."""
    with closing(sqlite3.connect(db_path)) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()[0]
    assert root > 1
    with db_path.open("r+b") as handle:
        handle.seek((root - 1) * page_size)
        handle.write(b"\xa5" * page_size)


def test_a_store_with_a_damaged_records_page_is_refused_with_exit_6_not_a_crash(
    app: App, run: Cli
) -> None:
    """The header and schema are fine, so the store opens; the damage shows only when a
    command reads the records table. That must still be a StoreError (exit 6), not exit 70."""
    db_path = app.settings.db_path
    _fill(app)
    _damage_page(db_path, "records")
    damaged = db_path.read_bytes()

    results = {args[0]: run(*args) for args in (["memories"], ADD, ["search", "orbit layer"])}

    assert db_path.read_bytes() == damaged
    codes = {name: result.exit_code for name, result in results.items()}
    assert codes == {"memories": 6, "add": 6, "search": 6}, {
        name: result.stderr for name, result in results.items()
    }
    for result in results.values():
        assert "damaged" in _assert_refused(result, db_path)
