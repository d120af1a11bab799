"""[capture] review: what agents write waits for a person. A held draft passed every rule of a
write, is never recalled, briefed, listed or exported, and becomes memory only when a person
at a terminal approves it. A real MCP client, the real CLI (in a pseudo-terminal where a
person is needed), the real store."""

import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contextd.app import App, open_app
from contextd.config import load_settings
from tests.conftest import DECISION, Cli
from tests.hooks._support import configure, run_hook, session_start
from tests.mcp.test_tools import call, data

RULE = {
    "rule": "Never call the billing API from a request handler",
    "reason": "Billing calls take seconds and time out the web workers under load",
    "hardness": "strong",
}


@pytest.fixture
def held_app(home: Path, repo: Path) -> Iterator[App]:
    configure(home, '[capture]\nreview = "agent"\n')
    with open_app(load_settings(cwd=repo)) as opened:
        yield opened


def at_a_terminal(repo: Path, *args: str) -> tuple[int, str]:
    """`contextd ARGS` with a pseudo-terminal on stdin, as a person types it."""
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "contextd", *args],
            stdin=follower,
            capture_output=True,
            text=True,
            encoding="utf-8",
            cwd=repo,
            env=dict(os.environ),
            timeout=120,
            check=False,
        )
    finally:
        os.close(leader)
        os.close(follower)
    return done.returncode, done.stdout + done.stderr


def held(run: Cli) -> list[dict[str, Any]]:
    return list(run.json("review")["waiting"])


def test_what_an_agent_writes_waits_and_is_not_memory(held_app: App, run: Cli, repo: Path) -> None:
    (written,) = call(held_app, ("record_constraint", RULE))

    view = data(written)
    assert view["held_for_review"] is True
    assert "Held for review" in written.content[0].text
    (waiting,) = held(run)
    assert waiting["title"] == RULE["rule"] and waiting["kind"] == "constraint"
    assert run.json("memories")["records"] == []
    assert "billing" not in run("search", "billing API request handler").output.lower()
    briefing = run_hook("session-start", session_start(repo), cwd=repo).context
    assert "billing" not in briefing.lower()
    assert "1 draft (what agents wrote, or proposals) waits for the user's review" in briefing
    assert run.json("status")["waiting_review"] == 1
    bundle = run("bundle", "export", "--out", str(repo / "out.json"))
    assert bundle.exit_code == 0, bundle.output
    assert "billing" not in (repo / "out.json").read_text(encoding="utf-8").lower()


def test_an_agent_cannot_skip_the_queue_by_claiming_the_user_said_it(
    held_app: App, run: Cli
) -> None:
    (written,) = call(
        held_app,
        (
            "remember",
            {"text": "Deploys go out on Tuesdays only", "category": "convention", "origin": "user"},
        ),
    )

    assert data(written)["held_for_review"] is True
    assert len(held(run)) == 1


def test_the_queue_holds_only_what_passes_every_rule(held_app: App, run: Cli) -> None:
    secret = RULE | {
        "reason": "Use the key sk-live-" + "4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c to call it"
    }
    (refused, thin) = call(
        held_app,
        ("record_constraint", secret),
        ("record_constraint", RULE | {"reason": "slow"}),
    )

    assert refused.is_error and thin.is_error
    assert held(run) == []


def test_a_person_writes_without_waiting(held_app: App, run: Cli) -> None:
    assert run.json(*DECISION)["title"] == "Use NATS for the task queue"
    assert held(run) == []


def test_only_a_person_at_a_terminal_approves(held_app: App, run: Cli, repo: Path) -> None:
    call(held_app, ("record_constraint", RULE))
    (waiting,) = held(run)

    refused = run("review", "approve", waiting["short_id"])
    assert refused.exit_code != 0
    assert "needs a person at a terminal" in refused.output
    assert "Traceback" not in refused.output

    code, output = at_a_terminal(repo, "review", "approve", waiting["short_id"])
    assert code == 0, output
    assert "Approved constraint" in output
    assert held(run) == []
    assert "billing" in run("search", "billing API request handler").output.lower()


def test_a_rejected_draft_never_becomes_memory(held_app: App, run: Cli, repo: Path) -> None:
    call(held_app, ("record_constraint", RULE))
    (waiting,) = held(run)

    code, output = at_a_terminal(
        repo, "review", "reject", waiting["short_id"], "--reason", "We call it from a job"
    )

    assert code == 0, output
    assert held(run) == []
    assert "billing" not in run("search", "billing API request handler").output.lower()
    unknown = run("review", "approve", "0000000000")
    assert unknown.exit_code != 0 and "Traceback" not in unknown.output


def test_a_draft_is_edited_under_the_rules_of_update(held_app: App, run: Cli) -> None:
    call(held_app, ("record_constraint", RULE))
    (waiting,) = held(run)

    edited = run("review", "edit", waiting["short_id"], "--title", "Never call billing inline")
    thin = run("review", "edit", waiting["short_id"], "--reason", "slow")

    assert edited.exit_code == 0, edited.output
    assert held(run)[0]["title"] == "Never call billing inline"
    assert thin.exit_code != 0 and "Traceback" not in thin.output
    assert held(run)[0]["title"] == "Never call billing inline"


def test_drafted_checkpoints_wait_only_when_everything_does(
    home: Path, repo: Path, run: Cli
) -> None:
    from tests.hooks.test_capture import commit, session_end

    configure(home, '[capture]\nreview = "all"\n')
    commit(repo, "Start the project")
    run_hook("session-start", session_start(repo), cwd=repo)
    commit(repo, "Add the Redis Streams consumer")
    ended = run_hook("session-end", session_end(repo), cwd=repo)

    assert ended.reply is not None and "for your review" in ended.reply["systemMessage"]
    assert [w["kind"] for w in held(run)] == ["checkpoint"]

    configure(home, '[capture]\nreview = "agent"\n')
    run_hook("session-start", session_start(repo, "sess-2"), cwd=repo)
    commit(repo, "Retry failed jobs with backoff", path="retry.py")
    run_hook("session-end", session_end(repo, "sess-2"), cwd=repo)
    assert len(held(run)) == 1
    records = run.json("memories", "--kind", "checkpoint")["records"]
    assert [r["title"] for r in records] == ["Session ended after: Retry failed jobs with backoff"]


def test_an_unknown_review_policy_is_one_sentence(home: Path, repo: Path, run: Cli) -> None:
    configure(home, '[capture]\nreview = "sometimes"\n')

    done = run("review")

    assert done.exit_code != 0
    assert "review" in done.output and "Traceback" not in done.output
