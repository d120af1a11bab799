"""What git knows about a folder: its work-tree root, its remote, branch and dirty files."""

import re
import subprocess
from pathlib import Path

from msgspec import Struct

__all__ = [
    "GitError",
    "GitState",
    "changed_paths",
    "file_at",
    "git_path",
    "git_state",
    "normalise_remote",
    "remote_url",
    "staged_paths",
    "work_tree_root",
]

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


class GitError(Exception):
    """git refused a request; the message is git's own first line."""


def _git_bytes(folder: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), *args],
            capture_output=True,
            timeout=_TIMEOUT_S * 6,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git could not run ({exc})") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(message[0] if message else f"git {args[0]} failed")
    return done.stdout


def changed_paths(root: Path, prefix: str, since: str, until: str | None) -> list[tuple[str, str]]:
    """(status letter, path) of the files under `prefix` that differ between revision `since`
    and `until` (None: the work tree, untracked files included as added).

    Raises:
        GitError: a revision is unknown, or this is not a git work tree.
    """
    span = [since, until] if until else [since]
    out = _git_bytes(root, "diff", "--name-status", "--no-renames", "-z", *span, "--", prefix)
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    changes = [(fields[i][0], fields[i + 1]) for i in range(0, len(fields) - 1, 2)]
    if until is None:
        others = _git_bytes(root, "ls-files", "--others", "--exclude-standard", "-z", "--", prefix)
        changes += [
            ("A", path) for path in others.decode("utf-8", "surrogateescape").split("\0") if path
        ]
    return changes


def staged_paths(root: Path, prefix: str) -> list[str]:
    """Files under `prefix` added or changed in the index (what the next commit holds).

    Raises:
        GitError: this is not a git work tree.
    """
    out = _git_bytes(
        root, "diff", "--cached", "--name-only", "--diff-filter=ACMR", "-z", "--", prefix
    )
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def git_path(folder: Path, name: str) -> str:
    """Where git keeps `name` (e.g. hooks/pre-commit) for the work tree holding `folder`.

    Raises:
        GitError: not a git work tree.
    """
    out = _git_bytes(folder, "rev-parse", "--path-format=absolute", "--git-path", name)
    return out.decode("utf-8", "surrogateescape").strip()


def file_at(root: Path, revision: str | None, path: str) -> bytes | None:
    """A file's bytes at `revision` ("" for the index, None for the work tree); None when the
    file is not there."""
    if revision is None:
        try:
            return (root / path).read_bytes()
        except OSError:
            return None
    try:
        return _git_bytes(root, "show", f"{revision}:{path}")
    except GitError:
        return None


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
