"""The team of two developers the shared-memory tests work with."""

import subprocess
from pathlib import Path

import pytest

from tests.share._team import Developer, git


@pytest.fixture
def team(tmp_path: Path) -> tuple[Developer, Developer]:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    seed = tmp_path / "seed"
    subprocess.run(["git", "clone", "-q", str(remote), str(seed)], check=True)
    (seed / "README").write_text("orbit\n", encoding="utf-8")
    git(seed, "add", "README")
    git(seed, "-c", "user.email=s@example.com", "-c", "user.name=s", "commit", "-q", "-m", "seed")
    git(seed, "push", "-q", "origin", "HEAD:main")
    a, b = Developer("a", tmp_path, remote), Developer("b", tmp_path, remote)
    assert a.run("attach", "--no-import").returncode == 0
    shared = a.json("share")
    assert shared["created"] is True and shared["written"] == 0
    assert (a.repo / ".contextd" / "README.md").is_file()
    a.commit_all("Share contextd memory")
    git(a.repo, "push", "-q", "origin", "main")
    git(b.repo, "pull", "-q")
    assert b.run("attach", "--no-import").returncode == 0  # shared from its first attach
    return a, b
