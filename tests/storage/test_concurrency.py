"""Many writers at once, in threads of one process and in separate processes, lose nothing."""

import os
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path

from contextd.app import App
from contextd.models import Kind, MemoryBody, RecordDraft
from tests.storage.helpers import assert_fts_consistent, fts_rowids

WORKERS = 4
PER_WORKER = 50


def _project_titles(db_path: Path, project_id: str) -> list[str]:
    with closing(sqlite3.connect(db_path)) as conn:
        rows = conn.execute("SELECT title FROM records WHERE project_id = ?", (project_id,))
        return [row[0] for row in rows]


def test_four_threads_creating_through_one_app_store_every_record_once(app: App) -> None:
    project = app.current_project()
    start = threading.Barrier(WORKERS)
    failures: list[BaseException] = []
    connections: dict[int, int] = {}

    def create_many(n: int) -> None:
        try:
            start.wait()
            connections[n] = id(app.db.connection())
            for i in range(PER_WORKER):
                draft = RecordDraft(
                    kind=Kind.MEMORY,
                    title=f"thread {n} note {i} about something",
                    body=MemoryBody(),
                    category="note",
                )
                app.writer.create(draft, project, force=True)
        except BaseException as exc:  # asserted on below, in the test's own thread
            failures.append(exc)

    threads = [threading.Thread(target=create_many, args=(n,)) for n in range(WORKERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert not any(thread.is_alive() for thread in threads)
    assert failures == []
    assert len(set(connections.values())) == WORKERS  # each thread had its own connection
    titles = _project_titles(app.settings.db_path, project.id)
    expected = {
        f"thread {n} note {i} about something" for n in range(WORKERS) for i in range(PER_WORKER)
    }
    assert len(titles) == WORKERS * PER_WORKER
    assert set(titles) == expected
    assert len(app.reader.list_records(project)) == WORKERS * PER_WORKER
    assert_fts_consistent(app.settings.db_path)
    assert len(fts_rowids(app.settings.db_path, "thread")) == WORKERS * PER_WORKER


_WRITER = """
import sys

from contextd.app import open_app
from contextd.config import load_settings
from contextd.models import Kind, MemoryBody, RecordDraft

n = int(sys.argv[1])
with open_app(load_settings(project="orbit")) as app:
    project = app.current_project()
    for i in range(int(sys.argv[2])):
        draft = RecordDraft(
            kind=Kind.MEMORY,
            title=f"process {n} note {i} about something",
            body=MemoryBody(),
            category="note",
        )
        app.writer.create(draft, project, force=True)
"""


def test_four_processes_writing_one_store_at_once_store_every_record_once(
    app: App, tmp_path: Path
) -> None:
    project = app.current_project()
    assert project.slug == "orbit"
    outside = tmp_path / "elsewhere"  # not the attached folder: the project is found by name
    outside.mkdir()
    env = {**os.environ, "CONTEXTD_HOME": str(app.settings.home)}

    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(n), str(PER_WORKER)],
            cwd=outside,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        for n in range(WORKERS)
    ]
    outcomes = [writer.communicate(timeout=180) for writer in writers]

    for writer, (_, stderr) in zip(writers, outcomes, strict=True):
        assert writer.returncode == 0, stderr
    titles = _project_titles(app.settings.db_path, project.id)
    expected = {
        f"process {n} note {i} about something" for n in range(WORKERS) for i in range(PER_WORKER)
    }
    assert len(titles) == WORKERS * PER_WORKER
    assert set(titles) == expected
    # The parent's own open connection sees the other processes' commits too.
    assert len(app.reader.list_records(project)) == WORKERS * PER_WORKER
    assert_fts_consistent(app.settings.db_path)
    assert len(fts_rowids(app.settings.db_path, "process")) == WORKERS * PER_WORKER


def _open_files_of(path: Path) -> int:
    found = 0
    for fd in Path("/proc/self/fd").iterdir():
        try:
            found += os.readlink(fd).startswith(str(path))
        except OSError:
            continue  # closed meanwhile
    return found


def test_a_thread_that_ends_closes_its_connection(app: App) -> None:
    """The daemon runs each hosted MCP session's calls on threads of their own: a connection
    kept after its thread ended would pile up files and memory for as long as it runs."""
    if not Path("/proc/self/fd").is_dir():
        return  # counting open files needs Linux's /proc
    app.db.connection()  # this thread's, kept
    before = _open_files_of(app.db.path)

    def query() -> None:
        app.db.connection().execute("SELECT count(*) FROM records").fetchone()

    for _ in range(12):
        thread = threading.Thread(target=query)
        thread.start()
        thread.join()
    # SQLite may hold one closed connection's file until this thread's lock is released.
    assert _open_files_of(app.db.path) <= before + 1
