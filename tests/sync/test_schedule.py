"""Which remotes the scheduled pull takes, and that a failing remote or an unwritable results
file never makes it pull again before the interval is over (real store, real ssh that fails)."""

import logging
from pathlib import Path

import pytest

from contextd.app import App
from contextd.sync.schedule import RESULTS_FILE, PullResult, due, pull_due, read_results
from contextd.sync.ssh import RemoteSpec

NEVER_CONNECTS = ("-o", "ProxyCommand=false", "-o", "BatchMode=yes")


def test_a_remote_is_due_once_its_interval_has_passed() -> None:
    tried = {"lab": PullResult("lab", "2026-12-02T10:00:00.000Z", True)}
    assert due(["lab", "desk"], tried, 1800, "2026-12-02T10:29:59.000Z") == ["desk"]
    assert due(["lab", "desk"], tried, 1800, "2026-12-02T10:30:00.000Z") == ["lab", "desk"]


def test_a_results_file_that_is_not_ours_reads_as_none(home: Path) -> None:
    (home / RESULTS_FILE).write_text('[{"remote": 3}]', encoding="utf-8")
    assert read_results(home) == {}
    (home / RESULTS_FILE).write_bytes(b"\xff\x00")
    assert read_results(home) == {}


def test_a_failing_remote_is_recorded_and_not_tried_again_within_the_interval(
    app: App, home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app.remotes.add("gone", RemoteSpec("nowhere", ssh_options=NEVER_CONNECTS))
    tried: dict[str, PullResult] = {}
    with caplog.at_level(logging.INFO):
        first = pull_due(app.remotes, home, 3600, tried)
    assert [(r.remote, r.ok) for r in first] == [("gone", False)]
    assert first[0].error and "\n" not in first[0].error
    assert read_results(home)["gone"] == first[0]
    assert "scheduled pull from gone failed" in caplog.text
    assert pull_due(app.remotes, home, 3600, {}) == []  # the file remembers it
    assert app.remotes.get("gone").last_pull_at is None


def test_an_unwritable_results_file_does_not_make_every_tick_pull(app: App, home: Path) -> None:
    app.remotes.add("gone", RemoteSpec("nowhere", ssh_options=NEVER_CONNECTS))
    (home / RESULTS_FILE).mkdir()  # where the file would go
    tried: dict[str, PullResult] = {}
    assert len(pull_due(app.remotes, home, 3600, tried)) == 1
    assert pull_due(app.remotes, home, 3600, tried) == []
    assert not list(home.glob(f"{RESULTS_FILE}.*"))  # no scratch file left behind
