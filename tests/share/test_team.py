"""Two developers share one project's memory through git: a bare remote, two clones, two
homes, real git and real contextd processes."""

import json
import subprocess
from pathlib import Path

from tests.share._team import KAFKA, NATS, Developer, git


def test_memory_follows_branches_and_merges(team: tuple[Developer, Developer]) -> None:
    a, b = team
    git(a.repo, "checkout", "-q", "-b", "queue")
    nats = a.json(*NATS)["id"]
    assert (a.repo / ".contextd" / "records" / f"{nats}.md").is_file()
    assert f".contextd/records/{nats}.md" in git(a.repo, "status", "--porcelain", "-uall")
    a.commit_all("Record the queue decision")
    git(a.repo, "push", "-q", "origin", "queue")

    git(b.repo, "fetch", "-q")
    assert b.titles() == set()  # on main: not merged yet
    git(b.repo, "checkout", "-q", "queue")
    assert b.titles() == {"Use NATS JetStream for the task queue"}
    git(b.repo, "checkout", "-q", "main")
    assert b.titles() == set()  # switching branches switches the view

    git(a.repo, "checkout", "-q", "main")
    assert a.titles() == set()
    git(a.repo, "merge", "-q", "queue")
    git(a.repo, "push", "-q", "origin", "main")
    git(b.repo, "pull", "-q")
    assert a.titles() == b.titles() == {"Use NATS JetStream for the task queue"}

    # A supersedes it; after B pulls, the old one is NOT CURRENT for B too.
    kafka = a.json(*KAFKA, "--supersedes", nats)["id"]
    a.commit_all("Kafka replaces NATS")
    git(a.repo, "push", "-q", "origin", "main")
    git(b.repo, "pull", "-q")
    shown = b.json("show", nats)
    assert shown["status"] == "superseded" and shown["superseded_by"] == kafka
    assert b.titles() == {KAFKA[1]}
    assert "NOT CURRENT" in b.run("search", "task queue", "--include-superseded").stdout


def test_concurrent_records_merge_and_a_conflict_is_named(
    team: tuple[Developer, Developer],
) -> None:
    a, b = team
    nats = a.json(*NATS)["id"]
    a.commit_all("NATS")
    git(a.repo, "push", "-q", "origin", "main")
    git(b.repo, "pull", "-q")
    b.json("add", "Workers heartbeat every five seconds", "--category", "convention")
    b.commit_all("Heartbeat convention")
    a.json("add", "Never log a tenant's payload body", "--category", "gotcha")
    a.commit_all("Logging gotcha")
    git(a.repo, "push", "-q", "origin", "main")
    git(b.repo, "pull", "-q", "--no-rebase", "--no-edit")  # two new files: no conflict
    assert len(b.json("memories")["records"]) == 3

    # Both edit the same record: the conflicted file is refused and named.
    a.json("update", nats, "--title", "Use NATS JetStream for every task queue")
    a.commit_all("Title A")
    git(a.repo, "push", "-q", "origin", "main")
    b.json("update", nats, "--title", "Use NATS JetStream for the job queue")
    b.commit_all("Title B")
    merged = subprocess.run(
        ["git", "-C", str(b.repo), "pull", "-q", "--no-rebase", "--no-edit"],
        capture_output=True,
        check=False,
    )
    assert merged.returncode != 0  # a real conflict
    status = b.json("status")
    problems = status["shared"]["problems"]
    assert [p["path"].rsplit("/", 1)[1] for p in problems] == [f"{nats}.md"]
    assert "conflict markers" in problems[0]["reason"]
    briefing = b.run("hook", "session-start", cwd=b.repo)
    assert "conflict markers" in briefing.stdout


def test_a_deleted_file_leaves_the_view_and_a_secret_is_refused(
    team: tuple[Developer, Developer],
) -> None:
    a, _ = team
    nats = a.json(*NATS)["id"]
    path = a.repo / ".contextd" / "records" / f"{nats}.md"
    path.unlink()
    assert a.titles() == set()
    git(a.repo, "checkout", "-q", "--", ".")  # nothing committed: the file is simply gone
    leaked = path.with_name("01a23228-0000-7000-8000-000000000001.md")
    text = (
        '+++\nid = "01a23228-0000-7000-8000-000000000001"\nkind = "memory"\n'
        'title = "The staging database password is hunter2hunter2 use it"\n'
        'category = "gotcha"\nstatus = "active"\norigin = "user"\npriority = 3\n'
        "tags = []\nhints = []\nrelated_to = []\n"
        'created_at = "2026-11-30T10:00:00.000Z"\nupdated_at = "2026-11-30T10:00:00.000Z"\n'
        'verified_at = "2026-11-30T10:00:00.000Z"\n+++\n'
    )
    leaked.write_text(
        text.replace("hunter2hunter2", "postgres://app:Sup3rS3cret@db/prod"), encoding="utf-8"
    )
    assert "staging database" not in json.dumps(a.json("memories"))
    problems = a.json("status")["shared"]["problems"]
    assert problems and "secret" in problems[0]["reason"].lower()


def test_two_worktrees_of_one_clone_each_see_their_own_branch(
    team: tuple[Developer, Developer], tmp_path: Path
) -> None:
    a, _ = team
    other = tmp_path / "a-feature"
    git(a.repo, "worktree", "add", "-q", "-b", "feature", str(other))
    assert a.run("attach", "--no-import", cwd=other).returncode == 0  # the same project
    nats = a.json(*NATS, cwd=other)["id"]
    assert (other / ".contextd" / "records" / f"{nats}.md").is_file()
    assert not (a.repo / ".contextd" / "records" / f"{nats}.md").exists()
    assert a.titles() == set()  # main's worktree does not hold it
    assert {h["title"] for h in a.json("search", "task queue", cwd=other)["results"]} == {NATS[1]}
    assert a.json("memories")["records"] == []
    assert len(a.json("memories", cwd=other)["records"]) == 1


def test_a_link_moved_by_supersede_reaches_the_teammate(team: tuple[Developer, Developer]) -> None:
    a, b = team
    nats = a.json(*NATS)["id"]
    rule = a.json(
        "constrain",
        "Queue consumers ack a task only after its handler commits",
        "--reason",
        "An early ack loses the task whenever a worker dies between ack and commit",
        "--hardness",
        "strong",
        "--related",
        nats,
    )["id"]
    kafka = a.json(*KAFKA, "--supersedes", nats)["id"]
    assert kafka in (a.repo / ".contextd" / "records" / f"{rule}.md").read_text(encoding="utf-8")
    a.commit_all("Kafka replaces NATS")
    git(a.repo, "push", "-q", "origin", "main")
    git(b.repo, "pull", "-q")
    assert b.json("show", rule)["related_to"] == [kafka]
