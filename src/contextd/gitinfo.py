"""What git knows about a folder: its work-tree root, its remote, branch and dirty files."""

import re
import subprocess
from pathlib import Path

from msgspec import Struct

__all__ = ["GitState", "git_state", "normalise_remote", "remote_url", "work_tree_root"]

_TIMEOUT_S = 5


class GitState(Struct, frozen=True):
    branch: str | None
    short_sha: str | None
    dirty: int


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def work_tree_root(folder: Path) -> Path | None:
    """The top of the git work tree holding `folder`, or None outside git."""
    top = _git(folder, "rev-parse", "--show-toplevel")
    return Path(top) if top else None


def remote_url(root: Path) -> str | None:
    """The URL of `origin`, else of the first remote, else None."""
    remotes = (_git(root, "remote") or "").split()
    if not remotes:
        return None
    name = "origin" if "origin" in remotes else remotes[0]
    return _git(root, "remote", "get-url", name)


def git_state(root: Path) -> GitState | None:
    """Branch, short commit and number of changed files, or None outside git."""
    status = _git(root, "status", "--porcelain=v1", "--branch")
    if status is None:
        return None
    lines = status.splitlines()
    branch = None
    if lines and lines[0].startswith("## "):
        head = lines.pop(0)[3:]
        branch = head.split("...")[0].removeprefix("No commits yet on ")
        if branch.startswith("HEAD (no branch)"):
            branch = "detached"
    return GitState(branch, _git(root, "rev-parse", "--short", "HEAD"), len(lines))


_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://(?:[^@/]+@)?([^/:]+)(?::\d+)?/(.+)$", re.IGNORECASE)


def normalise_remote(url: str) -> str:
    """One spelling for one repository: `git@host:o/r.git` and `https://host/o/r` both give
    `host/o/r` (lower-case, no user, port or `.git`)."""
    text = url.strip()
    match = _URL.match(text) or _SCP_LIKE.match(text)
    if match:
        host, path = match.group(1), match.group(2)
        text = f"{host}/{path}"
    text = text.rstrip("/").removesuffix(".git").rstrip("/")
    return text.lower()
