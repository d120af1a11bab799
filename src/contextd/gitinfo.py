"""What git knows about a folder: its work-tree root, its remote, branch and dirty files."""

import re
import subprocess
from pathlib import Path

from msgspec import Struct

__all__ = [
    "changed_paths",
    "Commit",
    "commits",
    "diffs",
    "dirty_paths",
    "file_at",
    "FileChange",
    "files_naming",
    "git_path",
    "git_state",
    "GitError",
    "GitState",
    "head",
    "normalise_remote",
    "remote_url",
    "staged_paths",
    "work_tree_root",
]

_TIMEOUT_S = 5
_HISTORY_TIMEOUT_S = 30  # reading a long history once (later checks read only what is new)


class FileChange(Struct, frozen=True):
    status: str  # A added, M modified, D deleted, R renamed, C copied, T type changed
    path: str  # its name after the commit
    old_path: str | None = None  # its name before, when renamed or copied


class Commit(Struct, frozen=True):
    sha: str
    committed_at: int  # seconds since the epoch (committer time: when it landed)
    subject: str
    files: tuple[FileChange, ...]


class GitState(Struct, frozen=True):
    branch: str | None
    short_sha: str | None
    dirty: int


def _git(folder: Path, *args: str, timeout: float = _TIMEOUT_S) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
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


def head(root: Path) -> str | None:
    """The commit checked out, or None (no git, no commits yet). A plain checkout's HEAD is
    read from its files (no process to start: session start asks this every time)."""
    try:
        pointer = (root / ".git" / "HEAD").read_text(encoding="utf-8").strip()
        if pointer.startswith("ref: refs/heads/"):
            sha = (root / ".git" / pointer[5:]).read_text(encoding="utf-8").strip()
            if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha):
                return sha
    except (OSError, UnicodeDecodeError):
        pass  # a worktree, a packed or detached HEAD: ask git
    return _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")


def _range(after: str | None, since: int | None) -> list[str]:
    spec = [f"{after}..HEAD"] if after else ["HEAD"]
    return spec + ([f"--since=@{since}"] if since is not None and not after else [])


def commits(
    root: Path, *, after: str | None = None, since: int | None = None, limit: int | None = None
) -> list[Commit] | None:
    """Commits of HEAD's history, oldest first, with the files each changed (renames
    detected): those not reachable from commit `after`, else those since `since` (epoch
    seconds), else all. Merge commits are left out (their changes arrive with the merged
    commits); at most the `limit` newest. None when git fails (e.g. `after` is gone)."""
    out = _git(
        root,
        "log",
        "--reverse",
        "--no-merges",
        "-M",
        "--name-status",
        "-z",
        "--format=%x1e%H%x1f%ct%x1f%s",
        *([f"--max-count={limit}"] if limit else []),
        *_range(after, since),
        timeout=_HISTORY_TIMEOUT_S,
    )
    if out is None:
        return None
    return [c for c in (_commit(block) for block in out.split("\x1e")) if c is not None]


def _commit(block: str) -> Commit | None:
    header, _, rest = block.partition("\x00")
    parts = header.strip("\n").split("\x1f")
    if len(parts) != 3:
        return None
    sha, stamp, subject = parts
    fields = rest.strip("\n").split("\x00")
    files: list[FileChange] = []
    at = 0
    while at < len(fields):
        status = fields[at].strip()
        if not status:
            at += 1
            continue
        if status[0] in "RC" and at + 2 < len(fields):
            files.append(FileChange(status[0], fields[at + 2], fields[at + 1]))
            at += 3
        elif at + 1 < len(fields):
            files.append(FileChange(status[0], fields[at + 1]))
            at += 2
        else:
            break
    return Commit(sha, int(stamp), subject, tuple(files))


def files_naming(root: Path, words: list[str]) -> list[str]:
    """Files at HEAD that hold any of `words` as a whole word."""
    if not words:
        return []
    patterns = [arg for word in words for arg in ("-e", word)]
    out = _git(
        root, "grep", "-l", "-w", "-F", "-I", *patterns, "HEAD", "--", timeout=_HISTORY_TIMEOUT_S
    )
    return [line.split(":", 1)[1] for line in (out or "").splitlines() if ":" in line]


def diffs(
    root: Path, paths: list[str], *, after: str | None = None, since: int | None = None
) -> dict[str, dict[str, str]]:
    """For each commit (by sha) that changed any of `paths`: per file, the lines it added or
    removed and the function context git names for each hunk."""
    if not paths:
        return {}
    out = _git(
        root,
        "log",
        "--no-merges",
        "-p",
        "--unified=0",
        "--no-color",
        "-M",
        "--format=%x1e%H",
        *_range(after, since),
        "--",
        *paths,
        timeout=_HISTORY_TIMEOUT_S,
    )
    found: dict[str, dict[str, str]] = {}
    for block in (out or "").split("\x1e"):  # (the output was stripped: "\x1e" is blank)
        sha, _, patch = block.partition("\n")
        if sha.strip():
            found[sha.strip()] = _changed_lines(patch)
    return found


def _changed_lines(patch: str) -> dict[str, str]:
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    before = ""
    for line in patch.splitlines():
        if line.startswith("--- "):
            before = line[6:] if line.startswith("--- a/") else line[4:]
        elif line.startswith("+++ "):
            name = line[6:] if line.startswith("+++ b/") else before  # /dev/null: deleted
            current = found.setdefault(name, [])
        elif current is None:
            continue
        elif line.startswith("@@"):
            current.append(line.split("@@", 2)[-1])  # the enclosing function, if git knows it
        elif line[:1] in ("+", "-"):
            current.append(line[1:])
    return {path: "\n".join(lines) for path, lines in found.items()}


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


def dirty_paths(root: Path) -> list[str] | None:
    """Files of the work tree that differ from HEAD or the index, untracked ones included (a
    new folder as `folder/`), from one `git status`; None when git fails."""
    out = _git_bytes_or_none(
        root, "status", "--porcelain=v1", "-z", "--untracked-files=normal", "--no-renames",
        "--ignore-submodules",
    )  # fmt: skip
    if out is None:
        return None
    entries = out.decode("utf-8", "surrogateescape").split("\0")
    return [entry[3:] for entry in entries if len(entry) > 3]


def _git_bytes_or_none(folder: Path, *args: str) -> bytes | None:
    try:
        return _git_bytes(folder, *args)
    except GitError:
        return None


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
