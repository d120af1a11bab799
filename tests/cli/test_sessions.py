"""session start/end/list/show through the CLI, and records linked to the open session."""

import sqlite3
from pathlib import Path

import pytest

from tests.conftest import DECISION, Cli, make_repo

CHECKPOINT = ["checkpoint", "worker heartbeat completed", "--next", "lease-based allocation"]


def test_start_opens_a_session_and_a_second_start_closes_the_first(run: Cli, repo: Path) -> None:
    first = run.json("session", "start", "--agent", "claude")
    assert first["session"]["agent"] == "claude" and first["session"]["open"] is True
    assert first["closed"] is None and first["project"]["slug"] == "orbit"
    second = run.json("session", "start", "--agent", "codex")
    assert second["closed"]["id"] == first["session"]["id"]
    assert second["closed"]["ended_at"] == second["session"]["started_at"]
    listed = run.json("session", "list")["sessions"]
    assert [(s["agent"], s["open"]) for s in listed] == [("codex", True), ("claude", False)]


def test_start_says_in_words_which_session_it_closed(run: Cli, repo: Path) -> None:
    run("session", "start", "--agent", "claude")
    result = run("session", "start", "--agent", "codex")
    assert result.exit_code == 0, result.output
    assert "Started session" in result.output and "for codex on orbit" in result.output
    assert "Closed the session that was still open" in result.output and "claude" in result.output


def test_end_keeps_the_summary_and_a_second_end_has_nothing_open(run: Cli, repo: Path) -> None:
    started = run.json("session", "start", "--agent", "claude")["session"]
    ended = run.json("session", "end", "heartbeat wired up")
    assert ended["session"]["id"] == started["id"]
    assert ended["session"]["summary"] == "heartbeat wired up"
    assert ended["session"]["open"] is False and ended["session"]["ended_at"]
    again = run("session", "end", "more")
    assert again.exit_code == 3
    assert "No session is open on orbit" in again.stderr
    assert "session start --agent" in again.stderr and "Traceback" not in again.output


def test_end_with_an_id_prefix_adds_a_summary_to_an_ended_session(run: Cli, repo: Path) -> None:
    started = run.json("session", "start", "--agent", "claude")["session"]
    run.json("session", "end")
    out = run.json("session", "end", "looked back at it", "--id", started["id"][:13])
    assert out["already_ended"] is True
    assert out["session"]["summary"] == "looked back at it"
    assert run.json("session", "show", started["id"])["session"]["summary"] == "looked back at it"


def test_show_lists_what_was_made_in_the_window_and_nothing_outside_it(
    run: Cli, repo: Path
) -> None:
    before = run.json("add", "Workers poll the coordinator every second", "--category", "gotcha")
    session = run.json("session", "start", "--agent", "claude")["session"]
    memory = run.json(
        "add", "GPU scheduler uses NATS for task transport", "--category", "architecture"
    )
    decision = run.json(*DECISION)
    checkpoint = run.json(*CHECKPOINT)
    run.json("session", "end", "heartbeat wired up")
    after = run.json("add", "Deploys happen on Tuesdays only", "--category", "convention")

    shown = run.json("session", "show")
    assert shown["session"]["id"] == session["id"]
    assert [r["id"] for r in shown["checkpoints"]] == [checkpoint["id"]]
    assert [r["id"] for r in shown["memories"]] == [memory["id"]]
    assert [r["id"] for r in shown["decisions"]] == [decision["id"]]
    assert shown["constraints"] == [] and shown["pipelines"] == []
    made = {r["id"] for key in ("memories", "decisions", "checkpoints") for r in shown[key]}
    assert before["id"] not in made and after["id"] not in made
    assert shown["session"]["seconds"] >= 0 and shown["project"]["slug"] == "orbit"

    text = run("session", "show").output
    assert "heartbeat wired up" in text and "ran " in text and "→" in text
    assert "[architecture] GPU scheduler uses NATS" in text
    assert "worker heartbeat completed" in text and "Deploys happen" not in text


def test_records_written_while_a_session_is_open_carry_its_id(run: Cli, repo: Path) -> None:
    session = run.json("session", "start", "--agent", "claude")["session"]
    inside = run.json(*CHECKPOINT)
    global_memory = run.json("add", "Prefer small commits", "--category", "preference", "--global")
    run.json("session", "end")
    outside = run.json("add", "Deploys happen on Tuesdays only", "--category", "convention")
    assert inside["session_id"] == session["id"]
    assert global_memory["session_id"] is None  # a global record belongs to no session
    assert outside["session_id"] is None


def test_a_checkpoint_linked_to_a_session_is_shown_even_outside_its_window(
    run: Cli, repo: Path, home: Path
) -> None:
    session = run.json("session", "start", "--agent", "claude")["session"]
    checkpoint = run.json(*CHECKPOINT)
    run.json("session", "end")
    with sqlite3.connect(home / "contextd.db") as conn:  # as if written a day earlier
        conn.execute(
            "UPDATE records SET created_at = '2020-01-01T00:00:00.000Z' WHERE id = ?",
            (checkpoint["id"],),
        )
    shown = run.json("session", "show", session["id"][:13])
    assert [r["id"] for r in shown["checkpoints"]] == [checkpoint["id"]]


def test_show_of_an_open_session_runs_to_now(run: Cli, repo: Path) -> None:
    run.json("session", "start", "--agent", "claude")
    memory = run.json("add", "GPU scheduler uses NATS", "--category", "architecture")
    shown = run.json("session", "show")
    assert shown["session"]["open"] is True
    assert [r["id"] for r in shown["memories"]] == [memory["id"]]
    assert "now (open)" in run("session", "show").output


def test_show_and_list_with_no_session_yet(run: Cli, repo: Path) -> None:
    shown = run("session", "show")
    assert shown.exit_code == 3 and "No session yet on orbit" in shown.stderr
    assert run.json("session", "list")["sessions"] == []
    assert "No sessions yet" in run("session", "list").output


@pytest.mark.parametrize(
    ("reference", "code", "message"),
    [
        ("0123", 2, "too short"),
        ("ffffffff-ffff", 3, "No session with id"),
    ],
)
def test_bad_session_ids_are_refused_with_a_sentence(
    run: Cli, repo: Path, reference: str, code: int, message: str
) -> None:
    run.json("session", "start", "--agent", "claude")
    for args in (("session", "show", reference), ("session", "end", "--id", reference)):
        result = run(*args)
        assert result.exit_code == code, result.output
        assert message in result.stderr and "Traceback" not in result.output


def test_an_ambiguous_session_prefix_lists_the_candidates(run: Cli, repo: Path, home: Path) -> None:
    project_id = run.json("status")["project"]["id"]
    ids = [f"0aaaaaaa-0000-7000-8000-00000000000{i}" for i in range(3)]
    with sqlite3.connect(home / "contextd.db") as conn:
        conn.executemany(
            "INSERT INTO sessions(id, project_id, agent, started_at, ended_at) "
            "VALUES (?, ?, 'claude', ?, ?)",
            [
                (
                    i,
                    project_id,
                    f"2026-01-0{n + 1}T10:00:00.000Z",
                    f"2026-01-0{n + 1}T11:00:00.000Z",
                )
                for n, i in enumerate(ids)
            ],
        )
    result = run("session", "show", "0aaaaaaa-0000")
    assert result.exit_code == 2
    assert "fits 3 sessions" in result.stderr and ids[0] in result.stderr
    assert run.json("session", "show", ids[1])["session"]["started_at"].startswith("2026-01-02")
    shown = run("session", "list").output  # the shortest unique prefixes, all 36 characters
    assert all(i in shown for i in ids)
    assert "1h 00m" in shown


def test_list_is_per_project_unless_all_projects_and_honours_limit(
    run: Cli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run.json("session", "start", "--agent", "claude")
    other = make_repo(tmp_path / "sable")
    monkeypatch.chdir(other)
    run.json("attach")
    run.json("session", "start", "--agent", "codex")
    run.json("session", "start", "--agent", "cursor")
    here = run.json("session", "list")["sessions"]
    assert [s["agent"] for s in here] == ["cursor", "codex"]
    everywhere = run.json("session", "list", "--all-projects")["sessions"]
    assert [(s["agent"], s["project"]) for s in everywhere] == [
        ("cursor", "sable"),
        ("codex", "sable"),
        ("claude", "orbit"),
    ]
    assert [
        s["agent"]
        for s in run.json("session", "list", "--all-projects", "--limit", "1")["sessions"]
    ] == ["cursor"]
    assert run("session", "list", "--limit", "0").exit_code == 2
    table = run("session", "list", "--all-projects").output
    assert "open" in table and "orbit" in table and "sable" in table


def test_one_open_session_per_project_not_per_store(
    run: Cli, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run.json("session", "start", "--agent", "claude")
    other = make_repo(tmp_path / "sable")
    monkeypatch.chdir(other)
    run.json("attach")
    run.json("session", "start", "--agent", "codex")
    opened = [s for s in run.json("session", "list", "--all-projects")["sessions"] if s["open"]]
    assert sorted(s["agent"] for s in opened) == ["claude", "codex"]


def test_session_commands_need_a_project_and_an_agent(
    run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("session", "start", "--agent", "claude")
    assert result.exit_code == 3 and "contextd attach" in result.stderr
    missing = run("session", "start")
    assert missing.exit_code == 2 and "--agent" in missing.output


def test_show_leaves_out_other_projects_and_global_records_made_in_the_window(
    run: Cli, repo: Path, tmp_path: Path
) -> None:
    other = make_repo(tmp_path / "sable")
    run.json("attach", str(other))
    run.json("session", "start", "--agent", "claude")
    mine = run.json("add", "GPU scheduler uses NATS", "--category", "architecture")
    run.json("add", "Prefer small commits", "--category", "preference", "--global")
    theirs = run.json(
        "add", "Parser is a Pratt parser", "--category", "architecture", "--project", "sable"
    )
    assert theirs["session_id"] is None  # sable has no open session
    shown = run.json("session", "show")
    assert [r["id"] for r in shown["memories"]] == [mine["id"]]
