"""What the code-staleness check costs at session start, on a repository of many commits.

Run: .venv/bin/python benchmarks/bench_code_stale.py [--commits 10000] [--records 300]

A repository is generated with `git fast-import` (files in folders, each defining a few
functions; every commit edits one to three functions, and now and then a file is renamed or
deleted), over two years of committer dates. A store gets records naming files, folders, scope
globs and functions, verified at dates spread over the last year, so the first check reads
about half the history. Timed: the first check (reads history since the oldest verification),
a check with nothing new, and a check after 10 new commits; then the whole session-start hook
in-process, with and without the check. Medians of --rounds runs (CPU time beside wall time).
"""

import argparse
import random
import statistics
import subprocess
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import _one_shot  # noqa: F401  (one BLAS thread, as the CLI runs)
from msgspec.structs import replace

from contextd.app import open_app
from contextd.config import EmbeddingSettings, load_settings
from contextd.hooks.handlers import handle
from contextd.models import ConstraintBody, Hardness, Kind, MemoryBody, RecordDraft

START = datetime(2024, 1, 1, tzinfo=UTC)


def _source(path: str, version: int, rng: random.Random) -> str:
    stem = path.rsplit("/", 1)[-1].removesuffix(".py")
    lines = []
    for n in range(4):
        lines += [f"def {stem}_fn{n}(value):", f"    return value + {rng.randint(0, version)}", ""]
    return "\n".join(lines) + "\n"


def build_repo(root: Path, commits: int, seed: int = 7) -> list[str]:
    """A repository of `commits` commits; returns the files at HEAD."""
    rng = random.Random(seed)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    files = [f"pkg{d}/mod{d}_{k}.py" for d in range(100) for k in range(20)]
    stream: list[bytes] = []

    def data(text: str) -> None:
        raw = text.encode()
        stream.append(f"data {len(raw)}\n".encode() + raw + b"\n")

    step = (730 * 86400) // commits
    for number in range(commits):
        when = int(START.timestamp()) + number * step
        stream.append(b"commit refs/heads/main\n")
        stream.append(f"committer t <t@x> {when} +0000\n".encode())
        data(f"change {number}")
        if number == 0:
            for path in files:
                stream.append(f"M 100644 inline {path}\n".encode())
                data(_source(path, 0, rng))
            continue
        roll = rng.random()
        if roll < 0.02 and len(files) > 100:
            path = files.pop(rng.randrange(len(files)))
            stream.append(f"D {path}\n".encode())
        elif roll < 0.05:
            old = files.pop(rng.randrange(len(files)))
            new = old.replace(".py", f"_r{number}.py")
            files.append(new)
            stream.append(f"R {old} {new}\n".encode())
        else:
            for path in rng.sample(files, rng.randint(1, 3)):
                stream.append(f"M 100644 inline {path}\n".encode())
                data(_source(path, number, rng))
    subprocess.run(
        ["git", "-C", str(root), "fast-import", "--quiet"], input=b"".join(stream), check=True
    )
    subprocess.run(["git", "-C", str(root), "reset", "-q", "--hard", "main"], check=True)
    return files


_ADDED = iter(range(10**6, 10**7))


def add_commits(root: Path, files: list[str], count: int) -> None:
    rng = random.Random(count)
    for _ in range(count):
        number = next(_ADDED)
        path = rng.choice(files)
        (root / path).write_text(_source(path, number, rng) + f"# {number}\n", encoding="utf-8")
        subprocess.run(["git", "-C", str(root), "add", path], check=True)
        subprocess.run(
            [
                "git",
                "-C",
                str(root),
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@x",
                "commit",
                "-q",
                "-m",
                f"new work {number}",
            ],
            check=True,
        )


def store_records(app: object, files: list[str], count: int) -> None:
    rng = random.Random(3)
    project = app.current_project()  # type: ignore[attr-defined]
    last = START + timedelta(days=730)
    for number in range(count):
        verified = last - timedelta(days=rng.uniform(0, 365))
        stamp = verified.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        path = rng.choice(files)
        roll = number % 4
        if roll == 3:
            body = ConstraintBody(
                reason="Generated constraint for the staleness benchmark, with a reason",
                hardness=Hardness.ADVISORY,
                scope=(path.split("/")[0] + "/**",),
            )
            draft = RecordDraft(
                Kind.CONSTRAINT, f"Review {path.split('/')[0]}", body, created_at=stamp
            )
        else:
            stem = path.rsplit("/", 1)[-1].removesuffix(".py")
            title = (
                f"{path} parses the input"
                if roll == 0
                else f"Modules under {path.split('/')[0]}/ share a cache"
                if roll == 1
                else f"Call `{stem}_fn{rng.randrange(4)}` before saving"
            )
            draft = RecordDraft(Kind.MEMORY, title, MemoryBody(), category="note", created_at=stamp)
        app.writer.create(draft, project, force=True)  # type: ignore[attr-defined]


def timed(fn: object) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()  # type: ignore[operator]
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=10_000)
    parser.add_argument("--records", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "repo"
        started = time.perf_counter()
        files = build_repo(root, args.commits)
        print(
            f"repository: {args.commits} commits, {len(files)} files "
            f"(built in {time.perf_counter() - started:.1f} s)"
        )
        settings = load_settings(home=Path(scratch) / "home", cwd=root)
        settings = replace(settings, embeddings=EmbeddingSettings(provider="none"))
        with open_app(settings) as app:
            app.projects.attach(root)
            store_records(app, files, args.records)
            project = app.current_project()
            limit = settings.lifecycle.code_first_commits
            capped = app.code_staleness.check(project, first_limit=limit)
            print(
                f"first check at session start (at most {limit} commits): {capped.commits} "
                f"commits read, {capped.marked} marked, {capped.seconds * 1000:.0f} ms"
            )
            first = app.code_staleness.check(project, full=True)
            print(
                f"full first check (stale --code on a new store): {first.commits} commits "
                f"read, {first.anchored} records name code, {first.marked} marked, "
                f"{first.seconds * 1000:.0f} ms"
            )
            nothing = [timed(lambda: app.code_staleness.check(project)) for _ in range(args.rounds)]
            print(f"check, nothing new: {_median(nothing)}")
            fresh = []
            for _ in range(args.rounds):
                add_commits(root, files, 10)
                fresh.append(timed(lambda: app.code_staleness.check(project)))
            print(f"check after 10 new commits: {_median(fresh)}")
            payload = {"session_id": "bench", "cwd": str(root), "source": "startup"}
            hook = [
                timed(lambda: handle(app, "session-start", payload, None, root))
                for _ in range(args.rounds)
            ]
            print(f"session-start hook in-process, with the check (nothing new): {_median(hook)}")
        off = replace(settings, lifecycle=replace(settings.lifecycle, code_staleness=False))
        with open_app(off) as app:
            hook = [
                timed(lambda: handle(app, "session-start", payload, None, root))
                for _ in range(args.rounds)
            ]
            print(f"session-start hook in-process, without the check: {_median(hook)}")


def _median(samples: list[tuple[float, float]]) -> str:
    wall = statistics.median(s[0] for s in samples)
    cpu = statistics.median(s[1] for s in samples)
    return f"{wall:.1f} ms wall, {cpu:.1f} ms CPU"


if __name__ == "__main__":
    main()
