"""Hooks never fail the agent: whatever is wrong, exit 0 quickly, print nothing harmful, and
say what happened in $CONTEXTD_HOME/hook.log."""

import json
import os
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from tests.hooks._support import (
    EVENTS,
    daemon_processes,
    edit,
    end_processes,
    hook_env,
    payload_for,
    run_hook,
    session_start,
    user_prompt,
)
from tests.hooks.conftest import Seeded

# A hook's own budget is 4 s (prompt, post-edit, post-bash) or 10 s; on a loaded machine the
# interpreter start adds a little. "Quickly" here means well under the agent's hook timeout.
QUICK_S = 12.0


def _log_lines(home: Path) -> list[str]:
    path = home / "hook.log"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def _assert_failed_open(done_stdout: bytes, returncode: int, elapsed: float) -> None:
    assert returncode == 0
    assert done_stdout == b""
    assert elapsed < QUICK_S


@pytest.mark.usefixtures("seeded")
def test_stdin_that_is_not_a_json_object_is_logged_and_ignored(repo: Path, home: Path) -> None:
    inputs = {
        "session-start": b"garbage{",
        "prompt": b'["a", "JSON", "array"]',
        "post-edit": b"\xff\xfe not even utf-8",
        "post-bash": b'"just a string"',
        "pre-compact": b"{",
        "stop": b"null",
    }
    for event, raw in inputs.items():
        done = run_hook(event, cwd=repo, raw=raw)
        _assert_failed_open(done.stdout, done.returncode, done.elapsed)
        assert done.stderr == b"", event
    lines = _log_lines(home)
    assert len(lines) == len(inputs), lines
    for event, line in zip(inputs, lines, strict=True):
        assert f" hook {event} failed after " in line
    assert "not a JSON object" in lines[1]


def test_an_empty_stdin_is_an_empty_payload(tmp_path: Path, home: Path) -> None:
    done = run_hook("session-start", cwd=tmp_path, raw=b"")
    _assert_failed_open(done.stdout, done.returncode, done.elapsed)
    assert done.stderr == b""
    assert _log_lines(home) == []  # nothing went wrong: outside a project there is nothing to say


def test_an_unknown_event_says_so_on_stderr_only(repo: Path) -> None:
    done = run_hook("user-prompt", user_prompt(repo, "x" * 40), cwd=repo)
    assert done.returncode == 0 and done.stdout == b""
    assert b"EVENT must be one of session-start, prompt" in done.stderr
    none = subprocess.run(
        [sys.executable, "-m", "contextd", "hook"],
        input=b"{}",
        capture_output=True,
        env=hook_env(),
        timeout=60,
        check=False,
    )
    assert none.returncode == 0 and none.stdout == b""
    assert b"EVENT must be one of" in none.stderr


def test_an_unknown_event_is_recorded_in_the_hook_log(repo: Path, home: Path) -> None:
    run_hook("user-prompt", user_prompt(repo, "x" * 40), cwd=repo)
    assert any("user-prompt" in line for line in _log_lines(home))


def test_a_corrupt_database_makes_every_hook_exit_0_quickly(seeded: Seeded, home: Path) -> None:
    db = home / "contextd.db"
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    junk = os.urandom(64 * 1024)
    db.write_bytes(junk)
    for event in EVENTS:
        done = run_hook(event, payload_for(event, seeded.repo), cwd=seeded.repo)
        _assert_failed_open(done.stdout, done.returncode, done.elapsed)
        assert done.stderr == b"", event
    lines = _log_lines(home)
    assert [line.split(" hook ")[1].split()[0] for line in lines] == list(EVENTS)
    assert all("failed after" in line for line in lines)
    assert db.read_bytes() == junk  # refused, never overwritten


def test_an_invalid_config_file_is_logged_and_the_hooks_stay_silent(
    seeded: Seeded, home: Path
) -> None:
    (home / "config.toml").write_text("[context\nsession_budget = = 3\n", encoding="utf-8")
    for event in ("session-start", "post-edit"):
        done = run_hook(event, payload_for(event, seeded.repo), cwd=seeded.repo)
        _assert_failed_open(done.stdout, done.returncode, done.elapsed)
    lines = _log_lines(home)
    assert len(lines) == 2
    assert all("config.toml is not valid TOML" in line for line in lines), lines


def test_a_missing_home_folder_is_not_an_error(tmp_path: Path, repo: Path) -> None:
    fresh = tmp_path / "not" / "yet" / "there"
    try:
        done = run_hook(
            "session-start", session_start(repo), cwd=repo, env=hook_env(CONTEXTD_HOME=str(fresh))
        )
    finally:
        # No config.toml there, so autostart_daemon is on: end what the hook started.
        end_processes(daemon_processes(fresh))
    _assert_failed_open(done.stdout, done.returncode, done.elapsed)  # no project known there
    assert done.stderr == b""
    assert not (fresh / "hook.log").exists()


def test_a_home_that_cannot_exist_still_fails_open(tmp_path: Path, repo: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    env = hook_env(CONTEXTD_HOME=str(blocker / "home"))
    try:
        for event in ("session-start", "prompt"):
            done = run_hook(event, payload_for(event, repo), cwd=repo, env=env)
            _assert_failed_open(done.stdout, done.returncode, done.elapsed)
            assert done.stderr == b""
    finally:
        end_processes(daemon_processes(blocker / "home"))
    assert blocker.read_text(encoding="utf-8") == "not a folder"


def test_a_write_locked_store_does_not_hold_a_hook_past_its_budget(
    seeded: Seeded, home: Path
) -> None:
    with closing(sqlite3.connect(home / "contextd.db", isolation_level=None)) as holder:
        holder.execute("BEGIN IMMEDIATE")  # another writer, mid-transaction
        payload = edit(seeded.repo, "migrations/0042.sql", "s-locked")
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "contextd", "hook", "post-edit"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=seeded.repo,
            env=hook_env(),
        )
        try:
            stdout, _ = proc.communicate(json.dumps(payload).encode(), timeout=9.0)
            finished = True
        except subprocess.TimeoutExpired:
            finished = False
        holder.execute("ROLLBACK")
        if not finished:
            stdout, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0 and stdout == b""
    assert finished, f"still running {time.monotonic() - started:.1f} s in; budget 4 s"
    assert any("post-edit failed" in line for line in _log_lines(home))


def test_a_hook_blocked_where_no_signal_reaches_ends_at_its_budget_having_printed_nothing(
    tmp_path: Path, home: Path
) -> None:
    """The main thread stuck inside a C library's own wait loop (SQLite's busy handler, 30 s
    here), which the orderly deadline's signal cannot interrupt: the watchdog ends the process
    at the budget, counted from its start, printing nothing, and says so in hook.log."""
    locked = tmp_path / "locked.db"
    script = (
        "import sqlite3, sys\n"
        "from contextd.client.hook import run_hook\n"
        "def stuck(event, raw):\n"
        f"    sqlite3.connect({str(locked)!r}, timeout=30).execute('BEGIN IMMEDIATE')\n"
        "    return 'an answer that must not be printed'\n"
        "sys.exit(run_hook(['prompt'], stuck, repr, own_process=True))\n"
    )
    with closing(sqlite3.connect(locked, isolation_level=None)) as holder:
        holder.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-c", script],
            input=b"{}",
            capture_output=True,
            env={**os.environ, "CONTEXTD_HOME": str(home)},
            timeout=60,
        )
        elapsed = time.monotonic() - started
        holder.execute("ROLLBACK")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert elapsed < 20, f"ended after {elapsed:.1f} s: SQLite's wait ran its course (30 s)"
    (line,) = _log_lines(home)
    assert "hook prompt failed after" in line and "its 4 s budget was spent" in line
