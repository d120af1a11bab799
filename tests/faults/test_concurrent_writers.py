"""Four real processes writing one store at the same moment lose nothing and break nothing."""

import os
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

from contextd.app import App
from tests.storage.helpers import assert_fts_consistent

PROCESSES = 4
WRITES = 250

_WRITER = """
import pathlib
import sys
import time

from contextd.app import open_app
from contextd.config import load_settings
from contextd.models import Kind, MemoryBody, RecordDraft

n = int(sys.argv[1])
writes = int(sys.argv[2])
start_file = pathlib.Path(sys.argv[3])
ready_file = pathlib.Path(sys.argv[4])
with open_app(load_settings(project="orbit")) as app:
    project = app.current_project()
    ready_file.write_text("ready", encoding="utf-8")
    deadline = time.monotonic() + 60
    while not start_file.exists():
        if time.monotonic() > deadline:
            sys.exit("the start file never appeared")
        time.sleep(0.005)
    for i in range(writes):
        draft = RecordDraft(
            kind=Kind.MEMORY,
            title=f"process {n} writes note {i} about topic {n * 1000 + i}",
            body=MemoryBody(),
            category="note",
        )
        app.writer.create(draft, project, force=True)
print("done", flush=True)
"""


def _wait_for(paths: list[Path], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not all(p.exists() for p in paths):
        assert time.monotonic() < deadline, f"not all writers got ready: {paths}"
        time.sleep(0.05)


def test_four_processes_writing_250_records_each_at_once_store_exactly_1000_distinct_ones(
    app: App, tmp_path: Path
) -> None:
    project = app.current_project()
    db_path = app.settings.db_path
    app.db.close()  # the parent holds no connection while the writers run
    elsewhere = tmp_path / "elsewhere"  # the writers find the project by name, not by folder
    elsewhere.mkdir()
    start = tmp_path / "start"
    ready = [tmp_path / f"ready-{n}" for n in range(PROCESSES)]
    env = {**os.environ, "CONTEXTD_HOME": str(app.settings.home)}

    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(n), str(WRITES), str(start), str(ready[n])],
            cwd=elsewhere,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        for n in range(PROCESSES)
    ]
    try:
        _wait_for(ready)
        start.write_text("go", encoding="utf-8")
        outcomes = [writer.communicate(timeout=120) for writer in writers]
    finally:
        for writer in writers:
            if writer.poll() is None:
                writer.kill()
                writer.communicate()

    for writer, (stdout, stderr) in zip(writers, outcomes, strict=True):
        assert writer.returncode == 0, stderr
        assert stdout.strip() == "done"
        assert "Traceback" not in stderr
    with closing(sqlite3.connect(db_path)) as conn:
        titles = [
            row[0]
            for row in conn.execute("SELECT title FROM records WHERE project_id = ?", (project.id,))
        ]
        total = conn.execute("SELECT count(*) FROM records").fetchone()[0]
        integrity = conn.execute("PRAGMA integrity_check").fetchall()
        fts_rows = conn.execute(
            "SELECT count(*) FROM records_fts WHERE records_fts MATCH 'writes'"
        ).fetchone()[0]
    expected = {
        f"process {n} writes note {i} about topic {n * 1000 + i}"
        for n in range(PROCESSES)
        for i in range(WRITES)
    }
    assert total == PROCESSES * WRITES
    assert len(titles) == PROCESSES * WRITES
    assert len(set(titles)) == PROCESSES * WRITES
    assert set(titles) == expected
    assert integrity == [("ok",)]
    assert fts_rows == PROCESSES * WRITES
    assert_fts_consistent(db_path)
    assert len(app.reader.list_records(project)) == PROCESSES * WRITES
