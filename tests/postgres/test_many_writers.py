"""Many writers on many machines into one team server: 8 processes from two homes (two
"machines") lose no write, the duplicate rule holds when they race, and each developer keeps
sessions and checkpoints of their own."""

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from contextd.app import open_app
from contextd.config import load_settings
from contextd.models import CheckpointBody, Kind, RecordDraft, SearchQuery
from tests.conftest import make_repo

PROCESSES = 8
PER_PROCESS = 250

_WRITER = """
import sys

from contextd.app import open_app
from contextd.config import load_settings
from contextd.errors import DuplicateError
from contextd.models import Kind, MemoryBody, RecordDraft

n, count, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with open_app(load_settings(project="orbit")) as app:
    project = app.current_project()
    for i in range(count):
        title = "the one shared fact about deploys" if mode == "same" else (
            f"process {n} note {i} about something")
        draft = RecordDraft(kind=Kind.MEMORY, title=title, body=MemoryBody(), category="note")
        try:
            app.writer.create(draft, project, force=mode != "same")
        except DuplicateError:
            print("refused")
"""


def _homes(tmp_path: Path, url: str) -> list[Path]:
    """Two homes ("machines") on one server, the project attached in each."""
    homes = []
    for name in ("alice", "bob"):
        home = tmp_path / f"home-{name}"
        home.mkdir(mode=0o700)
        (home / "config.toml").write_text(
            '[embeddings]\nprovider = "hashing"\n[hooks]\nautostart_daemon = false\n'
            f'[store]\ndeveloper = "{name}"\nurl = "{url}"\n',
            encoding="utf-8",
        )
        homes.append(home)
    repo = make_repo(tmp_path / "orbit", "git@github.com:acme/orbit.git")
    with open_app(load_settings(home=homes[0], cwd=repo)) as app:
        app.projects.attach(repo)
    return homes


def _run_writers(homes: list[Path], tmp_path: Path, count: int, mode: str) -> list[str]:
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(n), str(count), mode],
            cwd=tmp_path,
            env={**os.environ, "CONTEXTD_HOME": str(homes[n % 2])},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        for n in range(PROCESSES)
    ]
    outputs = []
    for writer in writers:
        out, err = writer.communicate(timeout=600)
        assert writer.returncode == 0, err
        outputs.append(out)
    return outputs


@pytest.mark.slow
def test_eight_processes_from_two_machines_store_exactly_two_thousand_records(
    pg_url: str, tmp_path: Path
) -> None:
    homes = _homes(tmp_path, pg_url)
    _run_writers(homes, tmp_path, PER_PROCESS, "many")

    with psycopg.connect(pg_url) as conn:
        total = conn.execute("SELECT count(*), count(DISTINCT id) FROM records").fetchone()
        assert total == (PROCESSES * PER_PROCESS, PROCESSES * PER_PROCESS)
        titles = {r[0] for r in conn.execute("SELECT title FROM records")}
        assert titles == {
            f"process {n} note {i} about something"
            for n in range(PROCESSES)
            for i in range(PER_PROCESS)
        }
        conn.execute("SET enable_seqscan = off")  # answer from the indexes alone
        matched = conn.execute(
            "SELECT count(*) FROM records WHERE fts @@ CAST('process' AS tsquery)"
        ).fetchone()
        assert matched == (PROCESSES * PER_PROCESS,)
        lengths = conn.execute("SELECT min(fts_length) FROM records").fetchone()
        assert lengths is not None and lengths[0] > 0
        vectors = conn.execute(
            "SELECT count(*), count(DISTINCT record_id) FROM embeddings "
            "WHERE record_id IN (SELECT id FROM records)"
        ).fetchone()
        assert vectors == (PROCESSES * PER_PROCESS, PROCESSES * PER_PROCESS)
    with open_app(load_settings(home=homes[1], project="orbit")) as app:
        project = app.current_project()
        assert len(app.reader.list_records(project)) == PROCESSES * PER_PROCESS
        found = app.search.search(project, SearchQuery(text="process 3 note 17", limit=5))
        assert found.hits


def test_racing_writers_of_one_fact_store_it_once(pg_url: str, tmp_path: Path) -> None:
    homes = _homes(tmp_path, pg_url)
    outputs = _run_writers(homes, tmp_path, 1, "same")
    assert sum(out.count("refused") for out in outputs) == PROCESSES - 1
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM records").fetchone() == (1,)


def test_each_developer_has_open_sessions_and_checkpoints_of_their_own(
    pg_url: str, tmp_path: Path
) -> None:
    alice_home, bob_home = _homes(tmp_path, pg_url)
    with (
        open_app(load_settings(home=alice_home, project="orbit")) as alice,
        open_app(load_settings(home=bob_home, project="orbit")) as bob,
    ):
        project = alice.current_project()
        mine = alice.sessions.start(project, "claude-code")
        theirs = bob.sessions.start(project, "codex")
        assert alice.sessions.open_for(project).id == mine.id  # type: ignore[union-attr]
        assert bob.sessions.open_for(project).id == theirs.id  # type: ignore[union-attr]
        alice.writer.create(_checkpoint("alice stopped at the parser"), project)
        bob.writer.create(_checkpoint("bob stopped at the migration"), project)
        assert alice.reader.latest(project, Kind.CHECKPOINT).title == (  # type: ignore[union-attr]
            "alice stopped at the parser"
        )
        assert bob.reader.latest(project, Kind.CHECKPOINT).title == (  # type: ignore[union-attr]
            "bob stopped at the migration"
        )


def _checkpoint(title: str) -> RecordDraft:
    return RecordDraft(
        kind=Kind.CHECKPOINT,
        title=title,
        body=CheckpointBody(goal=title + ", tests were green before the refactor"),
    )


@pytest.fixture(autouse=True)
def _server_password(pg_url: str) -> None:
    """The writers find the password in PGPASSWORD (set by pg_url), never in a URL."""
