"""The record reader: what reading paths need, without the write rules."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from contextd.app import App
from contextd.errors import InvalidInputError, NotFoundError
from contextd.models import Kind, MemoryBody, RecordDraft
from tests.conftest import DECISION, Cli

WRITE_RULES = {
    "contextd.core.writing.writer",
    "contextd.core.writing.validation",
    "contextd.credentials.scan",
    "contextd.core.writing.duplicates",
    "contextd.core.writing.replacement",
}


def _memory(title: str) -> RecordDraft:
    return RecordDraft(kind=Kind.MEMORY, title=title, body=MemoryBody(), category="gotcha")


def test_the_reader_finds_by_prefix_and_follows_the_chain(app: App) -> None:
    old = app.writer.create(
        _memory("Deploys run from the release branch every Friday"), app.current_project()
    )
    new = app.writer.create(
        _memory("Deploys run from main on every merge, no freeze"),
        app.current_project(),
        force=True,
    )
    app.writer.supersede(old.id, new.id)
    short = app.reader.handles([old.id, new.id])[old.id]
    assert len(short) < len(old.id)
    detail = app.reader.detail(short)
    assert detail.record.id == old.id
    assert detail.successor is not None and detail.successor.id == new.id
    assert [r.id for r in app.reader.detail(new.id).predecessors] == [old.id]
    listed = app.reader.list_records(app.current_project(), include_inactive=True)
    assert {r.id for r in listed} == {old.id, new.id}


def test_a_deleted_id_says_when_and_a_bad_day_count_is_refused(app: App) -> None:
    record = app.writer.create(
        _memory("Deploys run from the release branch every Friday"), app.current_project()
    )
    app.writer.delete(record.id)
    with pytest.raises(NotFoundError, match="was deleted on"):
        app.reader.get(record.id)
    with pytest.raises(InvalidInputError, match="must be 0 to 36500"):
        app.reader.stale(app.current_project(), -1)


def test_reading_paths_load_none_of_the_write_rules(repo: Path, run: Cli) -> None:
    made = json.loads(run(*DECISION, "--json").output)
    script = (
        "import json, sys\n"
        "from contextd.app import open_app\n"
        "from contextd.config import load_settings\n"
        "from contextd.core.recall.briefing import briefing_candidates, build_briefing\n"
        "from contextd.models import SearchQuery\n"
        "with open_app(load_settings(), read_only=True) as app:\n"
        "    project = app.current_project()\n"
        "    hits = app.search.search(project, SearchQuery(text='task queue')).hits\n"
        "    shown = app.reader.detail(hits[0].record.id).record.id\n"
        "    candidates = briefing_candidates(app.reader, project)\n"
        "    build_briefing(app.reader, project, 2000, candidates)\n"
        "    app.status(project)\n"
        "print(json.dumps({'shown': shown, 'loaded': sorted(sys.modules)}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=repo,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=os.environ.copy(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["shown"] == made["id"]
    assert WRITE_RULES & set(answer["loaded"]) == set()
