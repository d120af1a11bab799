"""A writer killed with SIGKILL mid-transaction leaves the store whole: all or nothing."""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

from contextd.app import App
from contextd.models import Kind, MemoryBody, RecordDraft
from contextd.storage.sqlite.database import SqliteDatabase
from tests.storage.helpers import assert_fts_consistent

BULK = 3000
KILL_AFTER_VECTORS = 1500

# Announces "writing" from inside the transaction, once every record row and half the vectors
# went in (by then the page cache has spilled into the WAL): the trace callback sees each
# statement the store runs on its connection, executemany's rows included. It then pauses
# there (when asked to), so the kill lands mid-transaction however slow the machine is.
_BULK_WRITER = """
import sys
import time

from contextd.app import open_app
from contextd.config import load_settings
from contextd.models import Kind, MemoryBody, RecordDraft

bulk, kill_after, pause = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
inserts = 0


def watch(statement):
    global inserts
    if statement.startswith("INSERT INTO embeddings("):
        inserts += 1
        if inserts == kill_after:
            print("writing", flush=True)
            time.sleep(pause)


with open_app(load_settings(project="orbit")) as app:
    project = app.current_project()
    drafts = [
        RecordDraft(
            kind=Kind.MEMORY, title=f"bulk note number {i}", body=MemoryBody(), category="note"
        )
        for i in range(bulk)
    ]
    app.db.connection().set_trace_callback(watch)
    print("ready", flush=True)
    app.writer.create_many(drafts, project, force=True)
print("committed", flush=True)
"""

# A foreign-looking writer: a plain sqlite3 connection holding BEGIN IMMEDIATE with rows
# inserted (and spilled into the WAL by a one-page cache) when it is killed.
_LOCK_HOLDER = """
from msgspec.structs import replace
import sqlite3
import sys
import time

from contextd.ids import new_id
from contextd.storage import records as rows
from contextd.storage.sqlite.database import SqliteConnection

conn = sqlite3.connect(sys.argv[1], isolation_level=None, factory=SqliteConnection)
conn.execute("PRAGMA cache_size = 1")
template = rows.get_record(conn, sys.argv[2])
conn.execute("BEGIN IMMEDIATE")
for i in range(300):
    copy = replace(template, id=new_id(), title=f"uncommitted row number {i}")
    rows.insert_record(conn, copy)
print("holding", flush=True)
time.sleep(120)
"""


def _count(db_path: Path, where: str = "1") -> int:
    with closing(sqlite3.connect(db_path)) as conn:
        return int(conn.execute(f"SELECT count(*) FROM records WHERE {where}").fetchone()[0])


def _integrity(db_path: Path) -> list[tuple[str]]:
    with closing(sqlite3.connect(db_path)) as conn:
        return conn.execute("PRAGMA integrity_check").fetchall()


def _wal_size(db_path: Path) -> int:
    wal = db_path.with_name(db_path.name + "-wal")
    return wal.stat().st_size if wal.exists() else 0


def _spawn(script: str, *args: str, cwd: Path, home: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        env={**os.environ, "CONTEXTD_HOME": str(home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


def _read_line(process: subprocess.Popen[str], expected: str) -> None:
    """The child's next stdout line, which must be `expected` (readline blocks until it comes
    or the child exits; the child's own work is bounded, so this is bounded too)."""
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if line != expected:
        process.kill()
        _, stderr = process.communicate(timeout=30)
        raise AssertionError(f"expected {expected!r} from the child, got {line!r}: {stderr}")


def _kill(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL


def test_a_bulk_create_killed_mid_transaction_stores_none_of_its_records(
    app: App, tmp_path: Path
) -> None:
    project = app.current_project()
    db_path = app.settings.db_path
    app.db.close()
    wal_before = _wal_size(db_path)

    writer = _spawn(
        _BULK_WRITER,
        str(BULK),
        str(KILL_AFTER_VECTORS),
        "60",
        cwd=tmp_path,
        home=app.settings.home,
    )
    try:
        _read_line(writer, "ready")
        _read_line(writer, "writing")
        _kill(writer)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.communicate()

    # The killed transaction had pages in the WAL: recovery has something to discard.
    assert _wal_size(db_path) > wal_before
    SqliteDatabase.open(db_path).close()
    assert _integrity(db_path) == [("ok",)]
    assert_fts_consistent(db_path)
    count = _count(db_path)
    assert count in (0, BULK), f"{count} of {BULK} records survived the kill"
    assert count == 0  # killed before its commit, so nothing of it may remain
    draft = RecordDraft(
        kind=Kind.MEMORY,
        title="after the crash the store still takes writes",
        body=MemoryBody(),
        category="note",
    )
    record = app.writer.create(draft, project)
    assert app.reader.get(record.id).title == draft.title
    assert _count(db_path) == 1
    assert _integrity(db_path) == [("ok",)]
    assert_fts_consistent(db_path)


def test_a_bulk_create_left_to_finish_stores_all_of_its_records(app: App, tmp_path: Path) -> None:
    """The other half of all-or-nothing: the same writer, not killed, stores every record."""
    db_path = app.settings.db_path
    writer = _spawn(
        _BULK_WRITER, str(BULK), str(KILL_AFTER_VECTORS), "0", cwd=tmp_path, home=app.settings.home
    )
    stdout, stderr = writer.communicate(timeout=120)

    assert writer.returncode == 0, stderr
    assert stdout.split() == ["ready", "writing", "committed"]
    assert _count(db_path) == BULK
    assert _integrity(db_path) == [("ok",)]
    assert_fts_consistent(db_path)


def test_a_process_killed_while_holding_begin_immediate_leaves_the_store_usable(
    app: App, tmp_path: Path
) -> None:
    project = app.current_project()
    db_path = app.settings.db_path
    kept = app.writer.create(
        RecordDraft(
            kind=Kind.MEMORY,
            title="a committed note that must survive the crash",
            body=MemoryBody(),
            category="note",
        ),
        project,
    )
    app.db.close()

    holder = _spawn(_LOCK_HOLDER, str(db_path), kept.id, cwd=tmp_path, home=app.settings.home)
    try:
        _read_line(holder, "holding")
        # While it holds the write lock, nobody else can begin a write.
        with closing(sqlite3.connect(db_path, timeout=0, isolation_level=None)) as other:
            try:
                other.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                assert "locked" in str(exc)
            else:
                raise AssertionError("BEGIN IMMEDIATE succeeded while another process held it")
        _kill(holder)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.communicate()

    SqliteDatabase.open(db_path).close()
    assert _integrity(db_path) == [("ok",)]
    assert_fts_consistent(db_path)
    assert _count(db_path) == 1
    assert _count(db_path, "title LIKE 'uncommitted row%'") == 0
    started = time.monotonic()
    record = app.writer.create(
        RecordDraft(
            kind=Kind.MEMORY,
            title="a write right after the lock holder died",
            body=MemoryBody(),
            category="note",
        ),
        project,
    )
    assert time.monotonic() - started < 5  # the dead process's lock went with it
    assert {r.id for r in app.reader.list_records(project)} == {kept.id, record.id}
    assert _integrity(db_path) == [("ok",)]
    assert_fts_consistent(db_path)
