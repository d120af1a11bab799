"""`contextd sync --adopt`: hand edits of the mirror become records (add, update, archive)."""

import os
import pty
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.capped_run import run_capped
from tests.conftest import DECISION, Cli

NEW_DECISION = """
### Use PostgreSQL for job metadata

**Problem:** Job metadata must survive restarts and be queryable by the dashboard team

**Why chosen:** PostgreSQL is already deployed, backed up and monitored, so adding tables costs \
nothing to operate

**Tags:** storage, jobs
"""

NEW_DECISION_COMMAND = [
    "decide",
    "Use PostgreSQL for job metadata",
    "--problem",
    "Job metadata must survive restarts and be queryable by the dashboard team",
    "--why",
    "PostgreSQL is already deployed, backed up and monitored, so adding tables costs nothing",
]


def _folder(home: Path) -> Path:
    return home / "projects" / "orbit"


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def _drop_section(path: Path, record_id: str) -> None:
    text = path.read_text(encoding="utf-8")
    pattern = rf"<!-- contextd:record {record_id} -->\n### .*?(?=<!-- contextd:record|\n## |\Z)"
    path.write_text(re.sub(pattern, "", text, flags=re.S), encoding="utf-8")


@pytest.fixture
def synced(home: Path, repo: Path, run: Cli) -> dict[str, str]:
    ids = {
        "decision": run.json(*DECISION)["id"],
        "note": run.json("add", "Tabs are never used in YAML files", "--category", "convention")[
            "id"
        ],
    }
    run.json("sync")
    return ids


def _state(home: Path, run: Cli) -> tuple[object, dict[str, bytes]]:
    files = {str(p): p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()}
    files = {k: v for k, v in files.items() if "contextd.db" not in k}
    return run.json("memories", "--all")["records"], files


def test_adopt_round_trips_add_change_and_remove(
    home: Path, run: Cli, synced: dict[str, str]
) -> None:
    folder = _folder(home)
    _edit(folder / "decisions.md", "acks and replay", "acks, replay and flow control")
    _append(folder / "decisions.md", NEW_DECISION)
    _drop_section(folder / "overview.md", synced["note"])
    out = run.json("sync", "--adopt", "--yes")
    actions = sorted((c["action"], c["title"][:20]) for c in out["changes"])
    assert actions == [
        ("add", "Use PostgreSQL for j"),
        ("archive", "Tabs are never used "),
        ("update", "Use NATS for the tas"),
    ]
    changed = run.json("show", synced["decision"])
    assert "acks, replay and flow control" in changed["body"]["why_chosen"]
    assert run.json("show", synced["note"])["status"] == "archived"
    added = [r for r in run.json("memories")["records"] if r["title"].startswith("Use PostgreSQL")]
    assert len(added) == 1 and added[0]["origin"] == "user"
    assert added[0]["tags"] == ["storage", "jobs"]
    text = (folder / "decisions.md").read_text(encoding="utf-8")
    assert f"<!-- contextd:record {added[0]['id']} -->" in text  # regenerated with its marker
    assert run("sync").exit_code == 0  # nothing left to adopt
    assert run.json("sync", "--adopt", "--yes")["written"] == []


def test_an_update_goes_through_validation_and_nothing_changes_when_refused(
    home: Path, run: Cli, synced: dict[str, str]
) -> None:
    folder = _folder(home)
    text = (folder / "decisions.md").read_text(encoding="utf-8")
    why = re.search(r"\*\*Why chosen:\*\* (.*)", text)
    assert why is not None
    _edit(folder / "decisions.md", why.group(1), "it is faster")
    _append(folder / "decisions.md", NEW_DECISION)
    before = _state(home, run)
    result = run("sync", "--adopt", "--yes")
    assert result.exit_code == 2
    assert "why_chosen" in result.stderr and "decisions.md" in result.stderr
    assert _state(home, run) == before


def test_a_secret_written_into_the_mirror_is_refused(
    home: Path, run: Cli, synced: dict[str, str]
) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    _edit(_folder(home) / "overview.md", "Tabs are never used", f"Tabs ({token}) are never used")
    result = run("sync", "--adopt", "--yes")
    assert result.exit_code == 2 and token not in result.output


def test_dry_run_shows_the_plan_and_writes_nothing(
    home: Path, run: Cli, synced: dict[str, str]
) -> None:
    _drop_section(_folder(home) / "overview.md", synced["note"])
    before = _state(home, run)
    out = run.json("sync", "--adopt", "--dry-run")
    assert [c["action"] for c in out["changes"]] == ["archive"] and out["applied"] is False
    human = run("sync", "--adopt", "--dry-run")
    assert "archive" in human.stdout and "Tabs are never used" in human.stdout
    assert _state(home, run) == before


def test_without_yes_and_without_a_terminal_nothing_is_adopted(
    home: Path, run: Cli, synced: dict[str, str]
) -> None:
    _drop_section(_folder(home) / "overview.md", synced["note"])
    before = _state(home, run)
    result = run("sync", "--adopt")
    assert result.exit_code == 2 and "--yes" in result.stderr
    assert _state(home, run) == before


def _adopt_in_a_terminal(cwd: Path, answer: bytes) -> tuple[int, str]:
    """Run `contextd sync --adopt` with a real pseudo-terminal as stdin and answer its prompt."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "contextd", "sync", "--adopt"],
        cwd=cwd,
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ.copy(),
    )
    os.close(follower)
    try:
        time.sleep(0.1)  # not a timing assertion: the prompt is read whenever it arrives
        os.write(leader, answer)
        out, err = process.communicate(timeout=60)
    finally:
        os.close(leader)
    return process.returncode, out.decode() + err.decode()


def test_a_person_confirms_in_a_terminal(
    home: Path, repo: Path, run: Cli, synced: dict[str, str]
) -> None:
    _drop_section(_folder(home) / "overview.md", synced["note"])
    code, output = _adopt_in_a_terminal(repo, b"n\n")
    assert code == 1 and "Apply these 1 change(s)" in output
    assert run.json("show", synced["note"])["status"] == "active"
    code, output = _adopt_in_a_terminal(repo, b"y\n")
    assert code == 0, output
    assert run.json("show", synced["note"])["status"] == "archived"


def test_a_new_checkpoint_file_and_a_global_edit_are_adopted(
    home: Path, run: Cli, synced: dict[str, str]
) -> None:
    checkpoints = _folder(home) / "checkpoints"
    checkpoints.mkdir(exist_ok=True)
    (checkpoints / "today.md").write_text(
        "# checkpoint\n\n## Checkpoint\n\n### Lease allocation half done\n\n"
        "**Goal:** GPU leases\n\n**Next:**\n- expire stale leases\n- add metrics\n",
        encoding="utf-8",
    )
    _append(
        home / "global" / "overview.md",
        "\n### Prefer small pull requests everywhere\n\n**Category:** preference\n",
    )
    out = run.json("sync", "--adopt", "--yes")
    assert sorted(c["action"] for c in out["changes"]) == ["add", "add"]
    records = run.json("memories")["records"]
    checkpoint = next(r for r in records if r["kind"] == "checkpoint")
    assert checkpoint["body"]["next"] == ["expire stale leases", "add metrics"]
    preference = next(r for r in records if r["title"].startswith("Prefer small"))
    assert preference["project_id"] is None and preference["category"] == "preference"
    assert not (checkpoints / "today.md").exists()  # replaced by the canonical file
    assert len(list(checkpoints.glob("*.md"))) == 1


def test_a_new_section_under_an_unknown_heading_is_refused(
    home: Path, run: Cli, synced: dict[str, str]
) -> None:
    _append(
        _folder(home) / "overview.md",
        "\n## Random thoughts\n\n### Something worth keeping around\n",
    )
    result = run("sync", "--adopt", "--yes")
    assert result.exit_code == 2 and "Random thoughts" in result.stderr


def test_adopt_and_force_together_are_refused(home: Path, run: Cli) -> None:
    result = run("sync", "--adopt", "--force")
    assert result.exit_code == 2 and "not both" in result.stderr


def test_one_refused_section_adopts_nothing_and_fixing_it_adopts_everything(
    home: Path, run: Cli, synced: dict[str, str]
) -> None:
    old = run.json(*NEW_DECISION_COMMAND)["id"]
    run.json("archive", old)
    run.json("sync")
    folder = _folder(home)
    _edit(folder / "overview.md", "Tabs are never used", "Tabs are never ever used")  # good
    _append(folder / "decisions.md", NEW_DECISION)  # restates the archived decision: refused
    before = _state(home, run)
    result = run("sync", "--adopt", "--yes")
    assert result.exit_code == 4
    message = result.stderr.strip()
    assert message.count("\n") == 0 and "Traceback" not in message
    assert "Adopted nothing" in message and "projects/orbit/decisions.md" in message
    assert old in message and "sync --adopt" in message
    assert _state(home, run) == before  # the good edit was not applied either
    assert run.json("show", synced["note"])["title"] == "Tabs are never used in YAML files"

    _edit(
        folder / "decisions.md", "Use PostgreSQL for job metadata", "Keep job metadata in Postgres"
    )
    out = run.json("sync", "--adopt", "--yes")
    assert sorted(c["action"] for c in out["changes"]) == ["add", "update"]
    assert run.json("show", synced["note"])["title"] == "Tabs are never ever used in YAML files"
    titles = [r["title"] for r in run.json("memories")["records"]]
    assert "Keep job metadata in Postgres" in titles


def test_two_new_sections_with_one_title_are_refused_before_anything_is_adopted(
    home: Path, run: Cli, synced: dict[str, str]
) -> None:
    folder = _folder(home)
    _drop_section(folder / "overview.md", synced["note"])
    _append(folder / "decisions.md", NEW_DECISION + NEW_DECISION)
    before = _state(home, run)
    result = run("sync", "--adopt", "--yes")
    assert result.exit_code == 2 and "same record" in result.stderr
    assert _state(home, run) == before
    assert run.json("show", synced["note"])["status"] == "active"


def test_two_new_sections_saying_nearly_the_same_thing_are_refused(
    home: Path, run: Cli, synced: dict[str, str]
) -> None:
    # Each would pass the duplicate check against the store on its own; together they would
    # store one decision twice.
    folder = _folder(home)
    again = NEW_DECISION.replace(
        "### Use PostgreSQL for job metadata", "### Use PostgreSQL for jobs"
    )
    _append(folder / "decisions.md", NEW_DECISION + again)
    before = _state(home, run)
    result = run("sync", "--adopt", "--yes")
    assert result.exit_code == 2, result.stderr
    assert "say nearly the same thing" in result.stderr
    assert "Use PostgreSQL for jobs" in result.stderr
    assert _state(home, run) == before


def test_a_huge_file_in_the_mirror_is_refused_unread(
    home: Path, repo: Path, run: Cli, synced: dict[str, str]
) -> None:
    huge = _folder(home) / "checkpoints" / "huge.md"
    huge.parent.mkdir(exist_ok=True)
    with huge.open("wb") as handle:
        handle.truncate(64 * 1024**3)  # sparse: as a symlink to a huge file would be
    before = run.json("memories", "--all")["records"]
    done = run_capped(["sync", "--adopt", "--yes"], cwd=repo)
    assert (done.code, done.stderr) == (
        2,
        f"Error: {huge} is larger than 16 MB, the most a file of notes contextd reads may be; "
        "check that it is the file you meant.\n",
    )
    assert done.peak_mb < 200 and run.json("memories", "--all")["records"] == before
