"""Staleness anchored in code: records naming paths, folders, globs or symbols are marked when
git shows that code changed after they were verified; measured on a generated history."""

import os
import random
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from contextd.app import App
from contextd.core.recall.briefing import build_briefing
from contextd.models import (
    ConstraintBody,
    Hardness,
    Kind,
    MemoryBody,
    Project,
    Record,
    RecordDraft,
    SearchQuery,
)
from tests.conftest import Cli

START = datetime(2025, 1, 1, tzinfo=UTC)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _git(repo: Path, *args: str, when: datetime | None = None) -> None:
    env = dict(os.environ)
    if when is not None:
        stamp = when.strftime("%Y-%m-%dT%H:%M:%S+0000")
        env |= {"GIT_COMMITTER_DATE": stamp, "GIT_AUTHOR_DATE": stamp}
    env |= {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t"}
    env |= {"GIT_COMMITTER_EMAIL": "t@x"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)


def _write(repo: Path, path: str, text: str) -> None:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def _commit(repo: Path, message: str, when: datetime) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message, when=when)


def _memory(app: App, title: str, verified: datetime) -> Record:
    draft = RecordDraft(
        kind=Kind.MEMORY, title=title, body=MemoryBody(), category="note", created_at=_iso(verified)
    )
    return app.writer.create(draft, app.current_project(), force=True)


def _constraint(app: App, title: str, scope: tuple[str, ...], verified: datetime) -> Record:
    body = ConstraintBody(
        reason="The generated history checks that scope globs anchor staleness too",
        hardness=Hardness.STRONG,
        scope=scope,
    )
    draft = RecordDraft(kind=Kind.CONSTRAINT, title=title, body=body, created_at=_iso(verified))
    return app.writer.create(draft, app.current_project(), force=True)


def _source(module: int, number: int, version: int = 0) -> str:
    return (
        f"def func_{module}_{number}(value):\n    return value + {version}\n\n"
        f"def helper{module}{number}():\n    return {version}\n"
    )


# --- a generated history with known answers --------------------------------------------------


class History:
    """Files src/mN/fileK.py, each defining func_N_K; records naming some of them; commits
    that edit a function, edit only the helper beside it, rename or delete files; and the
    records each commit makes stale, worked out independently of contextd."""

    def __init__(self, repo: Path, seed: int) -> None:
        self.repo = repo
        self.rng = random.Random(seed)
        self.files = {f"src/m{m}/file{k}.py": (m, k) for m in range(6) for k in range(5)}
        self.when = START
        self.version = 0
        for path, (m, k) in self.files.items():
            _write(repo, path, _source(m, k))
        _commit(repo, "initial layout", self._tick())

    def _tick(self) -> datetime:
        self.when += timedelta(hours=1)
        return self.when

    def records(self, app: App) -> dict[str, tuple[str, object]]:
        """Records of every anchor type, and controls naming nothing; id -> (type, anchor)."""
        made: dict[str, tuple[str, object]] = {}
        verified = self._tick()
        paths = sorted(self.files)
        for path in self.rng.sample(paths, 8):
            made[_memory(app, f"Parsing rules live in {path}", verified).id] = ("path", path)
        for module in self.rng.sample(range(6), 3):
            folder = f"src/m{module}/"
            made[_memory(app, f"Module code sits under {folder}", verified).id] = (
                "folder",
                folder,
            )
        for path in self.rng.sample(paths, 8):
            m, k = self.files[path]
            made[_memory(app, f"Call `func_{m}_{k}` with a clean value", verified).id] = (
                "symbol",
                (m, k),
            )
        for module in self.rng.sample(range(6), 3):
            glob = f"src/m{module}/**"
            made[_constraint(app, f"Review module {module} changes", (glob,), verified).id] = (
                "glob",
                glob,
            )
        for number in range(6):
            made[_memory(app, f"Team lunch is on day {number}", verified).id] = ("none", None)
        return made

    def commits(self, count: int) -> list[tuple[datetime, str, str, str | None, str | None]]:
        """(when, kind, path, old path, changed symbol) of each commit made."""
        done = []
        for _ in range(count):
            live = sorted(self.files)
            path = self.rng.choice(live)
            m, k = self.files[path]
            roll = self.rng.random()
            self.version += 1
            version = self.version
            when = self._tick()
            if roll < 0.4:  # the function itself changes (its body, not its name)
                lines = (self.repo / path).read_text(encoding="utf-8").splitlines()
                lines[1] = f"    return value + {version}"
                _write(self.repo, path, "\n".join(lines) + "\n")
                _commit(self.repo, f"change func_{m}_{k}", when)
                done.append((when, "symbol", path, None, f"func_{m}_{k}"))
            elif roll < 0.75:  # only the helper beside it changes
                text = (self.repo / path).read_text(encoding="utf-8")
                lines = text.splitlines()
                lines[-1] = f"    return {version}"
                _write(self.repo, path, "\n".join(lines) + "\n")
                _commit(self.repo, f"tune helper{m}{k}", when)
                done.append((when, "edit", path, None, None))
            elif roll < 0.9:  # renamed within its folder
                new = f"src/m{m}/renamed{version}.py"
                _git(self.repo, "mv", path, new)
                _commit(self.repo, f"rename {path}", when)
                self.files[new] = self.files.pop(path)
                done.append((when, "rename", new, path, None))
            elif len(live) > 10:  # deleted
                _git(self.repo, "rm", "-q", path)
                _commit(self.repo, f"drop {path}", when)
                del self.files[path]
                done.append((when, "delete", path, None, f"func_{m}_{k}"))  # gone with it
        return done


def _truth(
    made: dict[str, tuple[str, object]],
    commits: list[tuple[datetime, str, str, str | None, str | None]],
    verified: dict[str, datetime],
) -> set[str]:
    """Records a careful reader would call stale: code they name changed after verification."""
    stale = set()
    aliases = {rid: {anchor} for rid, (kind, anchor) in made.items() if kind == "path"}
    for when, _kind, path, old, symbol in commits:
        touched = {path, old} - {None}
        for rid, (anchor_kind, anchor) in made.items():
            if when <= verified[rid]:
                if anchor_kind == "path" and old in aliases[rid]:
                    aliases[rid].add(path)  # a rename before verification still moves it
                continue
            if anchor_kind == "path":
                if touched & aliases[rid]:
                    stale.add(rid)
                if old in aliases[rid]:
                    aliases[rid].add(path)
            elif anchor_kind in ("folder", "glob"):
                prefix = str(anchor).rstrip("*")
                if any(str(p).startswith(prefix) for p in touched):
                    stale.add(rid)
            elif anchor_kind == "symbol" and symbol is not None:
                m, k = anchor  # type: ignore[misc]
                if symbol == f"func_{m}_{k}":
                    stale.add(rid)
    return stale


def _precision_recall(found: set[str], truth: set[str]) -> tuple[float, float]:
    right = len(found & truth)
    return (right / len(found) if found else 1.0, right / len(truth) if truth else 1.0)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_stale_marks_match_a_generated_history(app: App, repo: Path, seed: int) -> None:
    history = History(repo, seed)
    made = history.records(app)
    verified = {
        rid: datetime.fromisoformat(app.reader.get(rid).verified_at.replace("Z", "+00:00"))
        for rid in made
    }
    first = history.commits(30)
    project = app.current_project()
    report = app.code_staleness.check(project)
    assert report.full and report.commits == len(first)  # since the oldest verification
    # Verify a third of the records between two stretches of history: the first stretch
    # no longer counts for them.
    for rid in list(made)[::3]:
        app.writer.verify(rid)
    # verify() stamps the real clock; move the rest of history after it.
    history.when = max(history.when, datetime.now(UTC)) + timedelta(minutes=1)
    for rid in list(made)[::3]:
        verified[rid] = datetime.fromisoformat(
            app.reader.get(rid).verified_at.replace("Z", "+00:00")
        )
    second = history.commits(30)
    incremental = app.code_staleness.check(project)
    assert not incremental.full and incremental.commits == len(second)

    truth = _truth(made, first + second, verified)
    found = {record.id for record, _ in app.code_staleness.stale(project)}
    precision, recall = _precision_recall(found, truth)
    for rid in found ^ truth:
        print("  disagree:", made[rid], app.code_staleness.changes([rid]).get(rid), verified[rid])
    print(
        f"seed {seed}: {len(truth)} stale of {len(made)}, precision {precision:.2f}, "
        f"recall {recall:.2f}"
    )
    assert precision >= 0.95 and recall >= 0.95
    assert not {rid for rid, (kind, _) in made.items() if kind == "none"} & found


# --- what a mark does --------------------------------------------------------------------------


@pytest.fixture
def changed(app: App, repo: Path) -> tuple[Project, Record, Record]:
    _write(repo, "src/queue/worker.py", "def claim_task():\n    return 1\n")
    _commit(repo, "worker", START)
    named = _memory(app, "src/queue/worker.py acks after the commit", START + timedelta(hours=1))
    other = _memory(app, "The worker acks tasks after the commit", START + timedelta(hours=1))
    _write(repo, "src/queue/worker.py", "def claim_task():\n    return 2\n")
    _commit(repo, "claim tasks in batches", START + timedelta(days=3))
    project = app.current_project()
    app.code_staleness.check(project)
    return project, named, other


def test_recall_and_the_briefing_show_the_change_and_ranking_lowers_it(
    app: App, changed: tuple[Project, Record, Record]
) -> None:
    project, named, other = changed
    recall = app.search.recall(project, SearchQuery(text="worker acks after the commit"))
    assert "STALE: src/queue/worker.py changed in" in recall.text
    assert "claim tasks in batches" in recall.text
    hits = {h.record.id: h for h in recall.hits}
    assert hits[named.id].code_change is not None and hits[other.id].code_change is None
    factor = app.settings.search.code_stale_factor
    assert hits[named.id].terms.status_multiplier == pytest.approx(factor)
    briefing = build_briefing(
        app.reader, project, 2000, code_changes=app.code_staleness.changes([named.id])
    )
    assert "STALE: src/queue/worker.py changed" in briefing.text


def test_verify_clears_the_mark(app: App, changed: tuple[Project, Record, Record]) -> None:
    project, named, _ = changed
    assert [r.id for r, _ in app.code_staleness.stale(project)] == [named.id]
    app.writer.verify(named.id)
    assert app.code_staleness.stale(project) == []


def test_a_renamed_or_deleted_path_is_noticed(app: App, repo: Path) -> None:
    for name in ("a.py", "b.py"):
        _write(repo, f"lib/{name}", "x = 1\n")
    _commit(repo, "lib", START)
    moved = _memory(app, "lib/a.py keeps the settings", START + timedelta(hours=1))
    gone = _memory(app, "lib/b.py keeps the cache", START + timedelta(hours=1))
    _git(repo, "mv", "lib/a.py", "lib/settings.py")
    _git(repo, "rm", "-q", "lib/b.py")
    _commit(repo, "tidy lib", START + timedelta(days=1))
    project = app.current_project()
    app.code_staleness.check(project)
    changes = app.code_staleness.changes([moved.id, gone.id])
    assert changes[moved.id].change == "renamed from lib/a.py"
    assert changes[moved.id].path == "lib/settings.py"
    assert changes[gone.id].change == "deleted"
    app.writer.verify(moved.id)
    _write(repo, "lib/settings.py", "x = 2\n")  # the record named it a.py: followed
    _commit(repo, "settings", datetime.now(UTC) + timedelta(minutes=5))
    app.code_staleness.check(project)
    assert app.code_staleness.changes([moved.id])[moved.id].path == "lib/settings.py"


def test_stale_code_lists_records_with_the_commands_to_clear_them(
    run: Cli, app: App, changed: tuple[Project, Record, Record]
) -> None:
    _, named, _ = changed
    listed = run.json("stale", "--code")
    assert [r["id"] for r in listed["records"]] == [named.id]
    assert listed["records"][0]["stale"]["subject"] == "claim tasks in batches"
    assert f"contextd verify {named.id}" in listed["records"][0]["fix"]
    text = run("stale", "--code").stdout
    assert "contextd verify" in text and "claim tasks in batches" in text


def test_outside_git_the_check_says_so_and_marks_nothing(
    run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    monkeypatch.chdir(folder)
    assert run("attach").exit_code == 0
    run.json("add", "src/a.py holds the parser", "--category", "architecture")
    result = run("stale", "--code")
    assert result.exit_code == 0 and "no git work tree" in result.stdout
