"""A hook budget of 0 turns that hook off: it prints nothing and does no work."""

from pathlib import Path

from tests.conftest import Cli
from tests.hooks._support import configure, run_hook, session_start, user_prompt
from tests.hooks.conftest import Seeded

QUEUE_PROMPT = "Why did we pick NATS for the task queue after the deploy issues?"


def test_a_zero_session_budget_turns_the_briefing_off(seeded: Seeded, home: Path) -> None:
    configure(home, "[context]\nsession_budget = 0\n")
    done = run_hook("session-start", session_start(seeded.repo), cwd=seeded.repo)
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""
    assert not (home / "hook.log").exists()  # off, not failing
    # No work either: the briefing noted nothing as shown, so the prompt still recalls it.
    prompt = run_hook("prompt", user_prompt(seeded.repo, QUEUE_PROMPT), cwd=seeded.repo)
    assert seeded.decision in prompt.context


def test_a_zero_prompt_budget_turns_per_prompt_recall_off(seeded: Seeded, home: Path) -> None:
    config = '[embeddings]\nprovider = "hashing"\n[hooks]\nautostart_daemon = false\n'
    (home / "config.toml").write_text(config + "prompt_budget = 0\n", encoding="utf-8")
    done = run_hook("prompt", user_prompt(seeded.repo, QUEUE_PROMPT), cwd=seeded.repo)
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""
    assert not (home / "hook.log").exists()  # off, not failing
    briefing = run_hook("session-start", session_start(seeded.repo), cwd=seeded.repo)
    assert seeded.decision in briefing.context  # the other hooks still work


def test_zero_is_accepted_from_the_cli_and_a_negative_budget_refused(repo: Path, run: Cli) -> None:
    for key in ("context.session_budget", "hooks.prompt_budget"):
        assert run("config", "set", key, "0").exit_code == 0
        refused = run("config", "set", "--", key, "-1")
        assert refused.exit_code != 0 and "cannot be negative" in refused.stderr
    assert run("config", "set", "context.export_budget", "0").exit_code != 0
