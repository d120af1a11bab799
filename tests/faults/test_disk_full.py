"""A write that hits a full disk fails cleanly, and the store it leaves is whole.

The disk is "full" through RLIMIT_FSIZE in the child process: no file it writes may extend
past the limit, and with SIGXFSZ ignored the write gets EFBIG instead of killing it.
"""

import os
import resource
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from contextd.app import App
from contextd.models import Kind, MemoryBody, RecordDraft
from contextd.storage.sqlite.database import SqliteDatabase
from tests.storage.helpers import assert_fts_consistent

FILLERS = 30
# 32 KiB: the WAL index (-shm, 32 KiB) still fits, the WAL gets at most 7 page frames (an
# added memory needs more), and the database file, already larger, cannot grow at all.
FULL_AT = 32 * 1024


def _limit_file_size(limit: int) -> Callable[[], None]:
    def preexec() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return preexec


def _fill(app: App) -> list[str]:
    """Store some records and close every connection, so the WAL is folded into the file."""
    project = app.current_project()
    titles = [
        f"filler note {i} says the {word} service restarts at {i:02d}:00 UTC"
        for i, word in enumerate(["billing", "search", "ingest", "auth", "mailer"] * 6)
    ]
    for title in titles[:FILLERS]:
        draft = RecordDraft(kind=Kind.MEMORY, title=title, body=MemoryBody(), category="note")
        app.writer.create(draft, project, force=True)
    app.db.close()
    return titles[:FILLERS]


def _contextd(
    *args: str, cwd: Path, home: Path, limit: int | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "contextd", *args],
        cwd=cwd,
        env={**os.environ, "CONTEXTD_HOME": str(home)},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        preexec_fn=_limit_file_size(limit) if limit is not None else None,
    )


def _titles(db_path: Path) -> set[str]:
    with closing(sqlite3.connect(db_path)) as conn:
        return {row[0] for row in conn.execute("SELECT title FROM records")}


def _integrity(db_path: Path) -> list[tuple[str]]:
    with closing(sqlite3.connect(db_path)) as conn:
        return conn.execute("PRAGMA integrity_check").fetchall()


def test_an_add_on_a_full_disk_fails_with_one_error_line_and_the_store_stays_whole(
    app: App, repo: Path
) -> None:
    home = app.settings.home
    db_path = app.settings.db_path
    kept = _fill(app)
    assert db_path.stat().st_size > FULL_AT  # so the database file cannot grow at all
    assert not db_path.with_name("contextd.db-wal").exists()
    text = (
        "The nightly export writes its parquet files to the shared volume, and when that "
        "volume fills up the exporter silently skips partitions, so always check free space "
        "on /mnt/exports before a backfill: " + " ".join(f"partition-{i}" for i in range(150))
    )

    result = _contextd("add", text, "--category", "note", cwd=repo, home=home, limit=FULL_AT)

    assert result.returncode != 0
    assert result.returncode == 6, (result.returncode, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert "Traceback" not in result.stderr
    assert str(db_path) in lines[0]
    assert "disk" in lines[0]
    assert result.stdout == ""

    # Without the limit: the store opens, is sound, and holds exactly what it held before.
    SqliteDatabase.open(db_path).close()
    assert _integrity(db_path) == [("ok",)]
    assert_fts_consistent(db_path)
    assert _titles(db_path) == set(kept)
    again = _contextd("add", text, "--category", "note", cwd=repo, home=home)
    assert again.returncode == 0, again.stderr
    assert _titles(db_path) == {*kept, text}
    assert _integrity(db_path) == [("ok",)]
    assert_fts_consistent(db_path)


def test_an_add_whose_wal_fits_but_whose_checkpoint_cannot_grow_the_file_is_kept(
    app: App, repo: Path
) -> None:
    """The database file may not grow, but the WAL beside it has room: the commit lands in
    the WAL, folding it into the file at close fails quietly, and the next open replays it."""
    home = app.settings.home
    db_path = app.settings.db_path
    kept = _fill(app)
    text = "The staging cluster rotates its TLS certificates every Sunday at 03:00 UTC"

    result = _contextd(
        "add", text, "--category", "note", cwd=repo, home=home, limit=db_path.stat().st_size
    )

    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    SqliteDatabase.open(db_path).close()
    assert _integrity(db_path) == [("ok",)]
    assert_fts_consistent(db_path)
    assert _titles(db_path) == {*kept, text}


_BULK_ON_FULL_DISK = """
import resource
import signal
import sys

from contextd.app import open_app
from contextd.config import load_settings
from contextd.errors import ContextdError, StoreError
from contextd.models import Kind, MemoryBody, RecordDraft

limit = int(sys.argv[1])
with open_app(load_settings(project="orbit")) as app:
    project = app.current_project()
    drafts = [
        RecordDraft(
            kind=Kind.MEMORY,
            title=f"bulk note {i} written to a disk that is full",
            body=MemoryBody(),
            category="note",
        )
        for i in range(3000)
    ]
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    try:
        app.writer.create_many(drafts, project, force=True)
    except StoreError as exc:
        print("StoreError", exc)
    except ContextdError as exc:
        print("other ContextdError", type(exc).__name__, exc)
    except Exception as exc:
        print("untranslated", type(exc).__module__, type(exc).__name__, exc)
    else:
        print("stored")
"""


def test_a_bulk_create_that_fills_the_disk_mid_transaction_raises_store_error(
    app: App, tmp_path: Path
) -> None:
    """A transaction too big for SQLite's page cache spills into the WAL before COMMIT, so
    the full disk shows up inside the transaction's body, not at COMMIT."""
    db_path = app.settings.db_path
    kept = _fill(app)

    result = subprocess.run(
        [sys.executable, "-c", _BULK_ON_FULL_DISK, str(FULL_AT)],
        cwd=tmp_path,
        env={**os.environ, "CONTEXTD_HOME": str(app.settings.home)},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )

    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    outcome = result.stdout.strip()
    assert outcome.startswith("StoreError "), outcome
    assert str(db_path) in outcome
    SqliteDatabase.open(db_path).close()
    assert _integrity(db_path) == [("ok",)]
    assert_fts_consistent(db_path)
    assert _titles(db_path) == set(kept)
