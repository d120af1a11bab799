"""`contextd hook prompt` (UserPromptSubmit): per-prompt recall in a <working-memory> block."""

import re
from pathlib import Path

from tests.conftest import Cli, make_repo
from tests.hooks._support import (
    configure,
    run_hook,
    run_hooks,
    session_start,
    user_prompt,
)
from tests.hooks.conftest import Seeded

QUEUE_PROMPT = "Why did we pick NATS for the task queue after the deploy issues?"


def test_short_slash_and_bang_prompts_recall_nothing(seeded: Seeded) -> None:
    short = "NATS task queue redeploy why?"
    assert len(short) == 29
    prompts = [
        short,
        "/review the NATS task queue consumer and the deploy reconnect logic",
        "!grep -rn 'NATS task queue' src/ --include=*.py | head -n 50",
    ]
    runs = run_hooks([("prompt", user_prompt(seeded.repo, p)) for p in prompts], cwd=seeded.repo)
    for prompt, done in zip(prompts, runs, strict=True):
        assert done.returncode == 0, prompt
        assert done.stdout == b"", prompt
        assert done.stderr == b"", prompt


def test_a_relevant_prompt_recalls_the_record_with_id_kind_and_verified_date(
    seeded: Seeded, run: Cli
) -> None:
    record = run.json("show", seeded.decision)
    done = run_hook("prompt", user_prompt(seeded.repo, QUEUE_PROMPT), cwd=seeded.repo)
    assert done.returncode == 0, done.stderr
    done.stdout.decode("ascii")
    text = done.context
    assert text.startswith('<working-memory project="orbit">\n'), text
    assert text.endswith("\n</working-memory>"), text
    assert "may be off topic" in text
    verified = record["verified_at"][:10]
    assert re.search(rf"\[decision {seeded.decision} \W+ verified {verified}\]", text), text
    assert "Use NATS for the task queue" in text
    assert "why_chosen: NATS JetStream keeps durable consumers" in text
    assert text.count("\n[") <= 3  # at most prompt_max_results passages


def test_two_projects_with_near_identical_records_never_see_each_other(
    repo: Path, run: Cli, tmp_path: Path
) -> None:
    nova = make_repo(tmp_path / "nova", "git@github.com:acme/nova.git")
    assert run("attach", str(nova)).exit_code == 0
    why = (
        "NATS JetStream keeps durable consumers with acks and replay, so a worker that "
        "reconnects resumes where it stopped"
    )
    problem = "Redis pub/sub dropped tasks whenever workers reconnected during a deploy"
    mine = run.json("decide", "Use NATS for the task queue", "--problem", problem, "--why", why)
    theirs = run.json(
        "decide",
        "Use NATS for the task queues",
        "--problem",
        problem.replace("tasks", "jobs"),
        "--why",
        why,
        "--project",
        "nova",
    )
    shared = run.json(
        "add",
        "Task queue consumers must be idempotent because NATS redelivers after a deploy",
        "--category",
        "convention",
        "--global",
    )
    idempotent = "Must the task queue consumers be idempotent when NATS redelivers?"
    in_orbit, in_nova, *global_runs = run_hooks(
        [
            ("prompt", user_prompt(repo, QUEUE_PROMPT)),
            ("prompt", user_prompt(nova, QUEUE_PROMPT)),
            ("prompt", user_prompt(repo, idempotent, "sess-3")),
            ("prompt", user_prompt(nova, idempotent, "sess-4")),
        ],
        cwd=tmp_path,
    )
    assert mine["id"] in in_orbit.context and theirs["id"] not in in_orbit.context
    assert theirs["id"] in in_nova.context and mine["id"] not in in_nova.context
    assert 'project="nova"' in in_nova.context
    for done in global_runs:  # a global record reaches every project
        assert shared["id"] in done.context
        assert "global" in done.context
    assert mine["id"] not in global_runs[1].context
    assert theirs["id"] not in global_runs[0].context


def test_what_the_session_was_already_given_is_not_repeated(seeded: Seeded) -> None:
    briefed = run_hook("session-start", session_start(seeded.repo, "sess-a"), cwd=seeded.repo)
    assert seeded.decision in briefed.context
    same, fresh = run_hooks(
        [
            ("prompt", user_prompt(seeded.repo, QUEUE_PROMPT, "sess-a")),
            ("prompt", user_prompt(seeded.repo, QUEUE_PROMPT, "sess-b")),
        ],
        cwd=seeded.repo,
    )
    assert seeded.decision not in same.context
    assert seeded.decision in fresh.context
    again = run_hook("prompt", user_prompt(seeded.repo, QUEUE_PROMPT, "sess-b"), cwd=seeded.repo)
    assert seeded.decision not in again.context  # nor what an earlier prompt recalled


def test_without_a_daemon_recall_is_full_text_and_never_loads_a_model(
    seeded: Seeded, home: Path
) -> None:
    # The records are written; now point the embeddings at a server that does not exist. The
    # in-process hook must not try to embed the prompt (a model load or a network call per
    # prompt is far over budget): it answers from the full-text index alone.
    configure(home, "")
    (home / "config.toml").write_text(
        '[embeddings]\nprovider = "openai"\napi_base = "http://127.0.0.1:9/v1"\n'
        'api_key_env = "CONTEXTD_TEST_NO_SUCH_KEY"\n[hooks]\nautostart_daemon = false\n',
        encoding="utf-8",
    )
    done = run_hook("prompt", user_prompt(seeded.repo, QUEUE_PROMPT), cwd=seeded.repo)
    assert done.returncode == 0
    assert seeded.decision in done.context
    assert not (home / "hook.log").exists()
    assert not (home / "daemon.sock").exists()


def test_full_text_recall_leaves_out_a_passing_word_match_however_important(
    seeded: Seeded, home: Path, run: Cli
) -> None:
    # Without vectors there is no similarity floor; what counts is how well the words match,
    # not the priority or freshness that the total score adds on top.
    critical = run.json(
        "add",
        "Release notes go into CHANGES.md before anyone tags a build",
        "--category",
        "convention",
        "--priority",
        "5",
        "--tag",
        "deploy",
    )["id"]
    (home / "config.toml").write_text(
        '[embeddings]\nprovider = "none"\n[hooks]\nautostart_daemon = false\n', encoding="utf-8"
    )
    done = run_hook("prompt", user_prompt(seeded.repo, QUEUE_PROMPT), cwd=seeded.repo)
    assert seeded.decision in done.context
    assert critical not in done.context
