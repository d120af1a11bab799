"""`contextd hook session-start`: the bounded briefing a new agent session starts with."""

import re
import sqlite3
from pathlib import Path

from tests.conftest import DECISION, POSTGRES, Cli, make_repo
from tests.hooks._support import configure, hook_env, run_hook, run_hooks, session_start
from tests.hooks.conftest import Seeded


def test_the_briefing_lists_absolute_constraints_first_then_the_rest(seeded: Seeded) -> None:
    done = run_hook("session-start", session_start(seeded.repo), cwd=seeded.repo)
    assert done.returncode == 0, done.stderr
    text = done.context
    assert text.startswith('<project-memory project="orbit">\n')
    assert "\n# contextd briefing: orbit" in text
    where = {name: text.find(rid) for name, rid in vars(seeded).items() if name != "repo"}
    assert all(at > 0 for at in where.values()), text
    # Written last, yet first: absolute, then strong constraints, then decisions.
    assert where["migration_rule"] < where["logging_rule"] < where["decision"], text
    assert "Never edit an applied migration" in text
    assert "Applied migrations are checksummed" in text  # the reason travels with the rule
    assert "migrations/**" in text
    assert "why: NATS JetStream keeps durable consumers" in text
    assert "left out" not in text


def test_a_superseded_record_is_never_in_the_briefing(repo: Path, run: Cli) -> None:
    old = run.json(*DECISION)
    new = run.json(*POSTGRES, "--supersedes", old["id"])
    archived = run.json("add", "The staging cluster lives in eu-west-1", "--category", "note")
    run.json("archive", archived["id"])
    text = run_hook("session-start", session_start(repo), cwd=repo).context
    assert new["id"] in text and "SKIP LOCKED" in text
    assert old["id"] not in text
    assert "Use NATS for the task queue" not in text
    assert archived["id"] not in text and "eu-west-1" not in text


def test_silent_outside_an_attached_project_and_found_from_a_subfolder(
    seeded: Seeded, tmp_path: Path, home: Path
) -> None:
    loose = make_repo(tmp_path / "loose")  # a git repo, but never attached
    deep = seeded.repo / "src" / "pkg"
    deep.mkdir(parents=True)
    outside, inside = run_hooks(
        [("session-start", session_start(loose)), ("session-start", session_start(deep))],
        cwd=loose,
    )
    assert outside.returncode == 0
    assert outside.stdout == b"" and outside.stderr == b""
    assert seeded.decision in inside.context
    assert not (home / "hook.log").exists()  # staying silent is not a failure


def test_contextd_project_names_the_project_wherever_the_agent_runs(
    seeded: Seeded, tmp_path: Path
) -> None:
    loose = tmp_path / "scratch"
    loose.mkdir()
    done = run_hook(
        "session-start",
        session_start(loose),
        cwd=loose,
        env=hook_env(CONTEXTD_PROJECT="orbit"),
    )
    assert seeded.migration_rule in done.context


def test_the_reply_is_pure_ascii_whatever_the_records_hold(repo: Path, run: Cli) -> None:
    title = "Café menus use naïve UTF-8 — never Latin-1 ✓ 日本語"
    record = run.json("add", title, "--category", "convention")
    done = run_hook("session-start", session_start(repo), cwd=repo)
    assert done.returncode == 0
    done.stdout.decode("ascii")  # raises on any byte above 127
    assert all(byte < 128 for byte in done.stdout)
    assert f"[convention {record['id']}] {title}" in done.context


def test_the_session_budget_leaves_records_out_and_says_so(
    seeded: Seeded, run: Cli, home: Path
) -> None:
    for n in range(6):
        run.json(
            "add",
            f"Gotcha {n}: the worker pool must be drained before resizing node group {n}",
            "--category",
            "gotcha",
        )
    configure(home, "[context]\nsession_budget = 120\n")
    text = run_hook("session-start", session_start(seeded.repo), cwd=seeded.repo).context
    header = next(line for line in text.splitlines() if line.startswith("# contextd briefing"))
    match = re.search(r"\((\d+) more records left out for the budget; use get_context\)", header)
    assert match, header
    shown = len(re.findall(r"^- \[", text, flags=re.MULTILINE))
    assert shown >= 1 and int(match.group(1)) == 9 - shown
    assert seeded.migration_rule in text  # the absolute rule is the last thing to drop
    # About four characters a token, plus the nudge after the fenced briefing.
    assert len(text.split("</project-memory>")[0]) < 4 * 120 + 40


def test_the_quality_nudge_counts_records_not_issues(repo: Path, run: Cli, home: Path) -> None:
    """One record both untagged and stale is one record that needs attention."""
    record = run.json(*DECISION)["id"]
    with sqlite3.connect(home / "contextd.db") as conn:
        conn.execute(
            "UPDATE records SET verified_at = '2020-01-01T00:00:00.000Z' WHERE id = ?", (record,)
        )
    text = run_hook("session-start", session_start(repo), cwd=repo).context
    assert "contextd: 1 record needs attention" in text
