"""Reviewing shared memory with git: `contextd log` over revisions, and the pre-commit hook
that keeps a secret typed into a record file out of the repository. Real git, real commits."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DECISION, POSTGRES, Cli

SECRET_LINE = 'title = "Staging reads postgres://app:Sup3rS3cretPw@db.internal/prod daily"\n'


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    return done.stdout


@pytest.fixture
def shared(repo: Path, run: Cli) -> Path:
    assert run.json("share")["created"] is True
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "share")
    return repo


def test_log_names_what_a_branch_changed_in_memory(shared: Path, run: Cli) -> None:
    nats = run.json(*DECISION)["id"]
    assert [(c["what"], c["id"]) for c in run.json("log")["changes"]] == [("added", nats)]
    git(shared, "add", "-A")
    git(shared, "commit", "-q", "-m", "nats")
    first = git(shared, "rev-parse", "HEAD").strip()
    postgres = run.json(*POSTGRES, "--supersedes", nats)["id"]
    rule = run.json(
        "constrain",
        "Never edit an applied migration",
        "--reason",
        "Applied migrations are checksummed in production; an edit breaks the next deploy",
        "--hardness",
        "absolute",
    )["id"]
    git(shared, "add", "-A")
    git(shared, "commit", "-q", "-m", "postgres")
    run.json("update", rule, "--priority", "5")
    git(shared, "add", "-A")
    git(shared, "commit", "-q", "-m", "rule")
    changes = run.json("log", f"{first}..HEAD")["changes"]
    by_id = {c["id"]: c for c in changes}
    assert by_id[nats]["what"] == "superseded" and by_id[nats]["superseded_by"] == postgres
    assert by_id[postgres]["what"] == "added" and by_id[rule]["what"] == "added"
    assert [c["what"] for c in run.json("log", "HEAD~1..HEAD")["changes"]] == ["changed"]
    assert run.json("log", "HEAD~1..HEAD")["changes"][0]["fields"] == ["priority"]
    text = run("log", f"{first}..HEAD").output
    assert "superseded" in text and "Never edit an applied migration" in text
    bad = run("log", "no-such-rev..HEAD")
    assert bad.exit_code == 2 and "git cannot compare" in bad.output


def _planted(shared: Path) -> Path:
    record_id = "01a23228-0000-7000-8000-00000000beef"
    path = shared / ".contextd" / "records" / f"{record_id}.md"
    path.parent.mkdir(exist_ok=True)
    path.write_text(
        f'+++\nid = "{record_id}"\nkind = "memory"\n{SECRET_LINE}category = "gotcha"\n'
        'status = "active"\norigin = "user"\npriority = 3\ntags = []\nhints = []\n'
        'related_to = []\ncreated_at = "2026-11-30T10:00:00.000Z"\n'
        'updated_at = "2026-11-30T10:00:00.000Z"\nverified_at = "2026-11-30T10:00:00.000Z"\n'
        "+++\n",
        encoding="utf-8",
    )
    return path


def test_the_pre_commit_hook_refuses_a_secret_typed_into_a_record_file(
    shared: Path, run: Cli, home: Path
) -> None:
    installed = run.json("setup", "--git-hooks")
    assert installed["action"] == "installed"
    hook = Path(installed["git_hook"])
    assert hook == shared / ".git" / "hooks" / "pre-commit" and hook.stat().st_mode & 0o111
    assert run.json("setup", "--git-hooks")["action"] == "already installed"

    run.json(*DECISION)  # a clean record commits through the hook
    git(shared, "add", "-A")
    git(shared, "commit", "-q", "-m", "clean")

    planted = _planted(shared)
    git(shared, "add", "-A")
    refused = subprocess.run(
        [
            "git",
            "-C",
            str(shared),
            "-c",
            "user.email=t@e.com",
            "-c",
            "user.name=t",
            "commit",
            "-m",
            "leak",
        ],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**_env(home)},
        check=False,
    )
    assert refused.returncode != 0
    assert planted.name in refused.stderr and "secret" in refused.stderr.lower()
    assert "Sup3rS3cretPw" not in refused.stderr  # named, never echoed
    assert "leak" not in git(shared, "log", "--format=%s")
    checked: Any = json.loads(run("share", "--check", "--json").stdout)
    assert checked["refused"][0]["path"].endswith(planted.name)


def test_another_pre_commit_hook_is_left_alone(shared: Path, run: Cli) -> None:
    hook = shared / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nmake lint\n", encoding="utf-8")
    result = run("setup", "--git-hooks")
    assert result.exit_code != 0 and "already holds a pre-commit hook" in result.output
    assert hook.read_text(encoding="utf-8") == "#!/bin/sh\nmake lint\n"


def _env(home: Path) -> dict[str, str]:
    import os

    return {
        **os.environ,
        "CONTEXTD_HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }


def test_the_pre_commit_hook_runs_where_git_has_no_contextd_on_its_path(
    shared: Path, run: Cli, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`setup` ran as `python -m contextd` or from a venv that is not on PATH: the hook names
    this contextd itself, so a commit from a shell without it still gets checked."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no contextd to find by name
    hook = Path(run.json("setup", "--git-hooks")["git_hook"])
    assert "exec /" in hook.read_text(encoding="utf-8")  # an absolute command, not a bare name
    run.json(*DECISION)
    git(shared, "add", "-A")
    done = subprocess.run(
        ["git", "-C", str(shared), "-c", "user.email=t@e.com", "-c", "user.name=t", "commit",
         "-q", "-m", "clean"],
        capture_output=True, text=True, encoding="utf-8",
        env={**_env(home), "PATH": "/usr/bin:/bin"},
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
