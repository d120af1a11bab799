"""Each agent's own hook payloads, run from folders unrelated to the project, as agents do."""

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from contextd.hooks.adapters import adapt, agent_of
from tests.hooks._support import HookRun, hook_env, run_hook, session_start
from tests.hooks.agent_payloads import (
    claude_session_start,
    codex_apply_patch,
    codex_bash,
    cursor_session_start,
    gemini_before_agent,
    gemini_session_start,
    gemini_shell,
    gemini_write_file,
)
from tests.hooks.conftest import Seeded


def context(done: HookRun, event: str) -> str:
    """The text the agent receives, from the reply shape its event takes."""
    assert done.returncode == 0, done.stderr
    if not done.stdout.strip():
        return ""
    reply: dict[str, Any] = json.loads(done.stdout)
    if "additional_context" in reply:  # Cursor
        return str(reply["additional_context"])
    assert reply["hookSpecificOutput"]["hookEventName"] == event, reply
    return str(reply["hookSpecificOutput"]["additionalContext"])


@pytest.fixture(params=["dot-cursor", "tmp"])
def unrelated(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """Where an agent may run its hooks: its own config folder, or the system's temp folder."""
    if request.param == "tmp":
        return Path(tempfile.gettempdir())
    folder = tmp_path / ".cursor"
    folder.mkdir()
    return folder


def commit(repo: Path, subject: str) -> None:
    identity = ["-c", "user.name=Ada", "-c", "user.email=ada@example.com"]
    subprocess.run(
        ["git", "-C", str(repo), *identity, "commit", "-q", "--allow-empty", "-m", subject],
        check=True,
    )


def test_cursor_session_start_finds_the_project_in_workspace_roots(
    seeded: Seeded, unrelated: Path, tmp_path: Path
) -> None:
    other = tmp_path / "scratch"
    other.mkdir()
    payload = cursor_session_start([other, seeded.repo])

    done = run_hook("session-start", payload, cwd=unrelated)

    text = context(done, "sessionStart")
    assert "# contextd briefing: orbit" in text, done.stdout
    assert seeded.migration_rule in text


def test_cursor_outside_every_project_stays_silent(seeded: Seeded, tmp_path: Path) -> None:
    done = run_hook("session-start", cursor_session_start([tmp_path]), cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == b""


def test_gemini_after_a_no_op_commit_says_nothing(seeded: Seeded, unrelated: Path) -> None:
    commit(seeded.repo, "init")
    nothing = "On branch main\nnothing to commit, working tree clean"
    payload = gemini_shell(seeded.repo, 'git commit -m "Add the index"', nothing, exit_code=1)

    done = run_hook("post-bash", payload, cwd=unrelated)

    assert done.returncode == 0 and done.stdout == b"", done.stdout


def test_gemini_after_a_failed_commit_says_nothing(seeded: Seeded, unrelated: Path) -> None:
    commit(seeded.repo, "init")
    payload = gemini_shell(seeded.repo, "git commit", "error: pathspec did not match", 128)
    assert run_hook("post-bash", payload, cwd=unrelated).stdout == b""


def test_gemini_after_a_real_commit_names_it(seeded: Seeded, unrelated: Path) -> None:
    commit(seeded.repo, "Add the index")
    said = "[main 1a2b3c4] Add the index\n 1 file changed, 3 insertions(+)"
    payload = gemini_shell(seeded.repo, 'git commit -m "Add the index"', said)

    text = context(run_hook("post-bash", payload, cwd=unrelated), "AfterTool")

    assert 'you committed "Add the index"' in text


def test_gemini_edit_prompt_and_start_reach_the_project(seeded: Seeded, unrelated: Path) -> None:
    repo = seeded.repo
    edited = gemini_write_file(repo, str(repo / "migrations" / "0042_index.sql"))
    asked = gemini_before_agent(repo, "Why did we pick NATS for the task queue after deploys?")

    guard = context(run_hook("post-edit", edited, cwd=unrelated), "AfterTool")
    recall = context(run_hook("prompt", asked, cwd=unrelated), "BeforeAgent")
    start = context(
        run_hook("session-start", gemini_session_start(repo), cwd=unrelated), "SessionStart"
    )

    assert seeded.migration_rule in guard
    assert seeded.decision in recall and "<working-memory" in recall
    assert "# contextd briefing: orbit" in start


def test_codex_apply_patch_is_guarded_for_each_file_it_names(
    seeded: Seeded, unrelated: Path
) -> None:
    payload = codex_apply_patch(seeded.repo, "src/queue.py", "migrations/0042_index.sql")

    text = context(run_hook("post-edit", payload, cwd=unrelated), "PostToolUse")

    assert "0042_index.sql is covered by" in text
    assert seeded.migration_rule in text


def test_codex_bash_commit_is_read_from_its_output(seeded: Seeded, unrelated: Path) -> None:
    commit(seeded.repo, "init")
    nothing = codex_bash(seeded.repo, "git commit -am wip", "nothing to commit, working tree clean")
    commit(seeded.repo, "Pin the queue client")
    real = codex_bash(seeded.repo, "git commit -am 'Pin'", "[main 9f8e7d6] Pin the queue client")

    assert run_hook("post-bash", nothing, cwd=unrelated).stdout == b""
    text = context(run_hook("post-bash", real, cwd=unrelated), "PostToolUse")
    assert '"Pin the queue client"' in text


def test_claude_project_dir_finds_the_project_when_cwd_has_left_it(
    seeded: Seeded, tmp_path: Path
) -> None:
    wandered = tmp_path / "scratch"
    wandered.mkdir()
    env = hook_env(CLAUDE_PROJECT_DIR=str(seeded.repo))

    found = run_hook("session-start", claude_session_start(wandered), cwd=wandered, env=env)
    lost = run_hook("session-start", claude_session_start(wandered), cwd=wandered)

    assert "# contextd briefing: orbit" in context(found, "SessionStart")
    assert lost.stdout == b""


def test_the_payloads_cwd_wins_over_the_project_dir(seeded: Seeded, tmp_path: Path) -> None:
    env = hook_env(CURSOR_PROJECT_DIR=str(tmp_path))
    done = run_hook("session-start", session_start(seeded.repo), cwd=tmp_path, env=env)
    assert "# contextd briefing: orbit" in done.context


@pytest.mark.parametrize(
    ("payload", "agent"),
    [
        (cursor_session_start([Path("/w")]), "cursor"),
        (gemini_session_start(Path("/w")), "gemini"),
        (gemini_shell(Path("/w"), "ls", "a"), "gemini"),
        (codex_bash(Path("/w"), "ls", "a"), "codex"),
        (claude_session_start(Path("/w")), "claude"),
        ({}, "claude"),
    ],
)
def test_each_payload_is_told_apart_by_its_documented_fields(
    payload: dict[str, Any], agent: str
) -> None:
    assert agent_of(payload) == agent


def test_the_folders_come_in_order_of_authority(tmp_path: Path) -> None:
    payload = cursor_session_start([Path("/work/a"), Path("/work/b")]) | {
        "workspace_roots": ["/work/a", "relative", 3, "/work/b"]
    }

    event = adapt(payload, tmp_path, ["/work/p", "/work/a"])

    assert event.folders == (Path("/work/a"), Path("/work/b"), Path("/work/p"), tmp_path)
    assert event.cwd == Path("/work/a") and event.session_key.startswith("c3b1e0f2")


def test_gemini_llm_content_as_parts_is_read(tmp_path: Path) -> None:
    payload = gemini_shell(tmp_path, "git commit", "x", 1)
    payload["tool_response"]["llmContent"] = [{"text": "Output: x"}, {"text": "Exit Code: 1"}]

    event = adapt(payload, tmp_path)

    assert event.failed and "Output: x" in event.output
