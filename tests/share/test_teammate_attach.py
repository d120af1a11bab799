"""A teammate's first `attach` in a clone that already shares `.contextd/` imports nothing the
shared files hold, and writes no record file of its own for it."""

import subprocess
from pathlib import Path

from tests.share._team import Developer, git

CLAUDE_MD = """# Orbit

## Conventions

- Always run the linters before pushing any branch
- Use structured logging with the request id in every line

## Gotchas

- The staging database resets every night at 2am UTC

## Architecture

- The scheduler talks to workers only through the task queue
"""


def test_a_teammates_attach_adds_nothing_the_shared_files_hold(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    a = Developer("a", tmp_path, remote)
    (a.repo / "CLAUDE.md").write_text(CLAUDE_MD, encoding="utf-8")
    first = a.json("attach")
    assert first["imported"]["records"] == 4
    assert a.json("share")["written"] == 3  # the architecture note is not shared
    a.commit_all("CLAUDE.md and shared memory")
    git(a.repo, "push", "-q", "origin", "HEAD:main")
    shared_files = sorted(p.name for p in (a.repo / ".contextd" / "records").iterdir())

    b = Developer("b", tmp_path, remote)
    attached = b.json("attach")
    assert attached["imported"] == {
        "files": ["CLAUDE.md"],
        "records": 1,  # only the note `.contextd/` does not hold (not shared by policy)
        "duplicates": 3,
        "refused": 0,
    }
    assert git(b.repo, "status", "--porcelain", "-uall") == ""
    assert sorted(p.name for p in (b.repo / ".contextd" / "records").iterdir()) == shared_files
    titles = [r["title"] for r in b.json("memories")["records"]]
    assert sorted(titles) == sorted(
        [
            "Always run the linters before pushing any branch",
            "Use structured logging with the request id in every line",
            "The staging database resets every night at 2am UTC",
            "The scheduler talks to workers only through the task queue",
        ]
    )
    again = b.json("attach")  # and a second attach imports nothing new
    assert again["imported"]["records"] == 0
    assert git(b.repo, "status", "--porcelain", "-uall") == ""
