"""Staleness anchored in code: a record that names code goes stale when git shows that code
changed after the record was last verified.

A check reads the project's history once (from the oldest verification of a record that names
code), then only the commits after the last one read. Each commit's changed files are matched
against the paths and scope globs records name — following renames, and noticing deletions —
and the diffs of files that hold a named symbol are read for a changed line naming it or a
change inside it (git names the enclosing function of each hunk). Each record keeps its latest
such change; `verify` re-stamps the record, which clears
the mark (the change is then older than the verification).
"""

import functools
import re
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

from msgspec import Struct

from contextd import gitinfo
from contextd.clock import now, parse_instant, to_iso
from contextd.core.upkeep.code_anchors import Anchors, anchors_of, path_matches
from contextd.models import CodeChange, Kind, Project, Record
from contextd.storage import code_changes as marks
from contextd.storage import records as rows
from contextd.storage.filters import RecordFilter
from contextd.storage.store import Database

__all__ = ["CheckReport", "CodeStaleness"]

_MAX_SYMBOL_FILES = 500  # files whose history is read for named symbols
_READ_ALL_FILES = 200  # up to this many changed files, every diff is read (no search first)


class CheckReport(Struct, frozen=True):
    repository: str | None  # the work tree read; None when the project has no git folder
    commits: int  # commits read this time
    anchored: int | None  # records that name code (None: not counted, nothing new to read)
    marked: int  # records newly marked stale
    seconds: float
    full: bool  # whether history was read from the start of the window, not incrementally


class CodeStaleness:
    def __init__(self, db: Database) -> None:
        self._db = db

    def check(
        self, project: Project, *, full: bool = False, first_limit: int | None = None
    ) -> CheckReport:
        """Read the project's new commits and mark the records whose code they changed.

        The first check (or `full`) reads history since the oldest verification of a record
        that names code, at most the `first_limit` newest commits when given."""
        started = time.perf_counter()
        root = _repository(project)
        if root is None:
            return CheckReport(None, 0, None, 0, 0.0, full)
        head = gitinfo.head(root)
        last = marks.last_check(self._db.connection(), project.id)
        if head is None or (not full and last is not None and last[0] == head):
            return CheckReport(str(root), 0, None, 0, time.perf_counter() - started, False)
        records = self._anchored(project)
        # Commits not reachable from the last one read: after a pull, the new ones; after a
        # switch to another branch, what that branch has and the last did not.
        after = last[0] if not full and last is not None else None
        renames = dict(last[1]) if after and last else {}
        found_commits = gitinfo.commits(root, after=after) if after else None
        if found_commits is None:  # first check, or the last commit read is gone
            after, renames = None, {}
            oldest = _oldest_verification(records)
            found_commits = (
                gitinfo.commits(root, since=oldest, limit=first_limit) if records else []
            )
        since = None if after else _oldest_verification(records)
        if found_commits and not after and first_limit and len(found_commits) >= first_limit:
            since = found_commits[0].committed_at  # the symbols' diffs: the same window
        commits = _inside(found_commits or [], _offset(project, root))
        found = _by_paths(records, commits, renames)
        found = _latest(found, self._by_symbols(root, records, commits, after, since))
        with self._db.transaction() as write:
            marks.upsert_changes(write, found.items())
            marks.save_check(write, project.id, head, renames, now())
        return CheckReport(
            str(root),
            len(commits),
            len(records),
            len(found),
            time.perf_counter() - started,
            after is None,
        )

    def changes(self, ids: list[str]) -> dict[str, CodeChange]:
        """The records among `ids` whose code changed since they were last verified."""
        return marks.current_changes(self._db.connection(), ids)

    def stale(self, project: Project) -> list[tuple[Record, CodeChange]]:
        """The project's active records marked stale, most recent change first."""
        active = rows.list_records(self._db.connection(), RecordFilter(project.id))
        mine = [r for r in active if r.project_id == project.id]
        found = self.changes([r.id for r in mine])
        listed = [(r, found[r.id]) for r in mine if r.id in found]
        return sorted(listed, key=lambda pair: pair[1].committed_at, reverse=True)

    def _anchored(self, project: Project) -> list[tuple[Record, Anchors]]:
        """The project's own active records that name code (checkpoints are history)."""
        scope = RecordFilter(project.id)
        found = []
        for record in rows.list_records(self._db.connection(), scope):
            if record.project_id != project.id or record.kind is Kind.CHECKPOINT:
                continue
            anchors = anchors_of(record)
            if anchors:
                found.append((record, anchors))
        return found

    def _by_symbols(
        self,
        root: Path,
        records: list[tuple[Record, Anchors]],
        commits: list[gitinfo.Commit],
        after: str | None,
        since: int | None,
    ) -> dict[str, CodeChange]:
        """Records whose named symbols a commit's changes hold: a line added or removed that
        names it, or a change inside it (the function git names for the hunk)."""
        wanted: dict[str, list[Record]] = defaultdict(list)
        for record, anchors in records:
            for symbol in anchors.symbols:
                wanted[symbol].append(record)
        if not wanted or not commits:
            return {}
        touched = {f.path for c in commits for f in c.files} | {
            f.old_path for c in commits for f in c.files if f.old_path
        }
        if len(touched) <= _READ_ALL_FILES:  # a few new commits: read every diff they made
            files = sorted(touched)
        else:  # a long history: only the files that hold a named symbol, or held one
            deleted = {f.path for c in commits for f in c.files if f.status == "D"}
            files = [p for p in gitinfo.files_naming(root, sorted(wanted)) if p in touched]
            files += sorted((touched & deleted) - set(files))
        files = _with_former_names(files, commits)
        by_sha = {c.sha: c for c in commits}
        word = {s: re.compile(rf"(?<![\w]){re.escape(s)}(?![\w])") for s in wanted}
        found: dict[str, CodeChange] = {}
        patches = gitinfo.diffs(root, files[:_MAX_SYMBOL_FILES], after=after, since=since)
        for sha, changed in patches.items():
            commit = by_sha.get(sha)
            if commit is None:
                continue
            moment = _iso(commit.committed_at)
            for path, text in changed.items():
                for symbol, pattern in word.items():
                    if not pattern.search(text):
                        continue
                    for record in wanted[symbol]:
                        known = found.get(record.id)
                        if moment > record.verified_at and (
                            known is None or moment >= known.committed_at
                        ):
                            found[record.id] = _change(commit, path, f"changed `{symbol}`")
        return found


def _with_former_names(files: list[str], commits: list[gitinfo.Commit]) -> list[str]:
    """`files` and every name they had or got through renames in `commits`, so git sees each
    move as a move (no line changed), not as a file deleted and another added."""
    names = set(files)
    moves = [(f.old_path, f.path) for c in commits for f in c.files if f.old_path]
    grown = True
    while grown:
        grown = False
        for old, new in moves:
            if (old in names) != (new in names):
                names.update((old, new))
                grown = True
    return files + sorted(names - set(files))


def _repository(project: Project) -> Path | None:
    for folder in project.paths:
        root = _work_tree_root(folder)
        if root is not None:
            return root
    return None


@functools.lru_cache(maxsize=64)  # a resident daemon asks at every session start
def _work_tree_root(folder: str) -> Path | None:
    return gitinfo.work_tree_root(Path(folder))


def _offset(project: Project, root: Path) -> str:
    """The project's folder inside the work tree ("" at its top), as a path prefix."""
    for folder in project.paths:
        try:
            inside = Path(folder).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            continue
        return "" if inside == "." else inside + "/"
    return ""


def _inside(commits: list[gitinfo.Commit], offset: str) -> list[gitinfo.Commit]:
    """Commits with their file paths relative to the project's folder (others left out)."""
    if not offset:
        return commits

    def mine(path: str | None) -> str | None:
        return path[len(offset) :] if path and path.startswith(offset) else None

    kept = []
    for commit in commits:
        files = tuple(
            gitinfo.FileChange(f.status, mine(f.path) or "", mine(f.old_path))
            for f in commit.files
            if mine(f.path) or mine(f.old_path)
        )
        if files:
            kept.append(gitinfo.Commit(commit.sha, commit.committed_at, commit.subject, files))
    return kept


def _oldest_verification(records: list[tuple[Record, Anchors]]) -> int | None:
    if not records:
        return None
    oldest = min(record.verified_at for record, _ in records)
    return int(parse_instant(oldest).timestamp())


def _iso(seconds: int) -> str:
    return to_iso(datetime.fromtimestamp(seconds, UTC))


def _change(commit: gitinfo.Commit, path: str, change: str) -> CodeChange:
    return CodeChange(commit.sha, _iso(commit.committed_at), commit.subject, path, change)


def _latest(first: dict[str, CodeChange], second: dict[str, CodeChange]) -> dict[str, CodeChange]:
    merged = dict(first)
    for rid, change in second.items():
        if rid not in merged or change.committed_at > merged[rid].committed_at:
            merged[rid] = change
    return merged


class _PathIndex:
    """Which records name a file: by its path (or a folder above it), its bare name, a
    wildcard, or a scope glob; a rename makes the new name find what the old one did."""

    def __init__(self, records: list[tuple[Record, Anchors]]) -> None:
        from pathspec import GitIgnoreSpec  # only when history is read

        self.exact: dict[str, list[Record]] = defaultdict(list)
        self.names: dict[str, list[Record]] = defaultdict(list)
        self.wild: list[tuple[Record, str]] = []
        by_scope: dict[tuple[str, ...], list[Record]] = defaultdict(list)
        for record, anchors in records:
            if anchors.globs:
                by_scope[anchors.globs].append(record)
        # One spec per distinct scope, with the folders its globs are rooted in (None: a glob
        # that matches at any depth), so most files skip most specs without matching them.
        self.scoped = [
            (GitIgnoreSpec.from_lines(globs), _roots(globs), owners)
            for globs, owners in by_scope.items()
        ]
        for record, anchors in records:
            for anchor in anchors.paths:
                if any(c in anchor for c in "*?["):
                    self.wild.append((record, anchor))
                elif "/" in anchor.rstrip("/"):
                    self.exact[anchor.rstrip("/")].append(record)
                else:
                    self.names[anchor.rstrip("/")].append(record)

    def rename(self, old: str, new: str) -> None:
        for record in self.exact.get(old, []):
            if record not in self.exact[new]:
                self.exact[new].append(record)

    def naming(self, path: str) -> list[Record]:
        """Records whose path anchors name `path`."""
        found: list[Record] = list(self.names.get(path.rsplit("/", 1)[-1], ()))
        parts = path.split("/")
        for end in range(len(parts), 0, -1):  # the file, then each folder above it
            found += self.exact.get("/".join(parts[:end]), ())
        found += [r for r, anchor in self.wild if path_matches(anchor, path)]
        return found

    def covering(self, path: str) -> list[Record]:
        """Records whose scope globs cover `path`."""
        found: list[Record] = []
        for spec, roots, owners in self.scoped:
            if roots is not None and not path.startswith(roots):
                continue
            if spec.match_file(path):
                found += owners
        return found


def _roots(globs: tuple[str, ...]) -> tuple[str, ...] | None:
    """The literal folder each glob starts with, when every glob is rooted in one."""
    roots = []
    for glob in globs:
        text = glob.strip().lstrip("/")
        if text.startswith("!") or "/" not in text.rstrip("/"):
            return None  # a negation, or a bare name that matches at any depth
        literal = re.split(r"[*?\[\\]", text, maxsplit=1)[0]
        folder = literal.rsplit("/", 1)[0] + "/" if "/" in literal else ""
        if not folder:
            return None
        roots.append(folder)
    return tuple(roots)


def _by_paths(
    records: list[tuple[Record, Anchors]],
    commits: list[gitinfo.Commit],
    renames: dict[str, str],
) -> dict[str, CodeChange]:
    """Records whose named paths or scope globs a commit changed, oldest commit first so each
    record ends with its latest change; `renames` (old -> new path) grows as commits rename."""
    index = _PathIndex(records)
    for old, new in renames.items():
        index.rename(old, new)
    found: dict[str, CodeChange] = {}
    for commit in commits:
        moment = _iso(commit.committed_at)
        for file in commit.files:
            touched: dict[str, tuple[Record, str]] = {}
            if file.status == "R" and file.old_path:
                renames[file.old_path] = file.path
                for record in index.naming(file.old_path):
                    touched[record.id] = (record, f"renamed from {file.old_path}")
                index.rename(file.old_path, file.path)
            for record in index.naming(file.path) + index.covering(file.path):
                touched.setdefault(record.id, (record, _verb(file)))
            if file.old_path:
                for record in index.covering(file.old_path):
                    touched.setdefault(record.id, (record, _verb(file)))
            for record, change in touched.values():
                if moment > record.verified_at:
                    found[record.id] = _change(commit, file.path, change)
    return found


def _verb(file: gitinfo.FileChange) -> str:
    return {"A": "added", "D": "deleted", "R": "renamed"}.get(file.status, "changed")
