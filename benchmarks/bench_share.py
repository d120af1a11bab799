"""Shared memory in a repository: how soon records that arrive by git are found.

Run: .venv/bin/python benchmarks/bench_share.py [--records 1000]

A repository gets --records record files on a branch (written by contextd itself, then
committed). Timed, each as a new `contextd search` process that must find a record from the
branch (full-text: vectors are filled later, in the background):
- the first command after checking the branch out (every file is new to the store);
- the first command after switching back to main (every file left the view);
- the first command after switching to the branch again (files the store has seen before);
- a command when nothing changed.
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXE = str(Path(sys.executable).parent / "contextd")
WORDS = (
    "queue worker lease heartbeat tenant partition deploy rollback index cache shard replica "
    "migration schema token budget retry backoff latency throughput ledger invoice"
).split()


def git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(folder), "-c", "user.email=b@e.com", "-c", "user.name=b", *args],
        check=True,
        capture_output=True,
    )


def timed_search(env: dict[str, str], cwd: Path, query: str, expect: str) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [EXE, "search", query, "--json"],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0 or (expect and expect not in done.stdout):
        raise SystemExit(f"search failed or missed {expect!r}: {done.stderr[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=1000)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        home, repo = root / "home", root / "repo"
        home.mkdir(mode=0o700)
        (home / "config.toml").write_text(
            '[embeddings]\nprovider = "none"\n[hooks]\nautostart_daemon = false\n', "utf-8"
        )
        env = dict(os.environ, CONTEXTD_HOME=str(home))
        env.pop("CONTEXTD_PROJECT", None)
        subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
        subprocess.run(
            [EXE, "attach", "--no-import"], env=env, cwd=repo, check=True, capture_output=True
        )
        subprocess.run([EXE, "share"], env=env, cwd=repo, check=True, capture_output=True)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "share")
        git(repo, "checkout", "-q", "-b", "memory")
        # Records written by a scratch store, so this store has never seen them.
        scratch = root / "scratch-home"
        scratch.mkdir(mode=0o700)
        shutil.copy(home / "config.toml", scratch / "config.toml")
        other = dict(env, CONTEXTD_HOME=str(scratch))
        subprocess.run(
            [EXE, "attach", "--no-import"], env=other, cwd=repo, check=True, capture_output=True
        )
        started = time.perf_counter()
        from contextd.app import open_app  # noqa: E402  (bench-only import)
        from contextd.config import load_settings
        from contextd.models import Kind, MemoryBody, RecordDraft

        with open_app(load_settings(home=scratch, cwd=repo)) as app:
            drafts = [
                RecordDraft(
                    Kind.MEMORY,
                    f"Note {i}: " + " ".join(rng.choice(WORDS) for _ in range(12)),
                    MemoryBody(),
                    category="convention",
                )
                for i in range(args.records)
            ]
            app.writer.create_many(drafts, app.current_project(), force=True)
        print(f"wrote {args.records} record files in {time.perf_counter() - started:.1f} s")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "memory")
        git(repo, "checkout", "-q", "main")
        timed_search(env, repo, "queue", "")  # the store knows main (no records)
        git(repo, "checkout", "-q", "memory")
        first = timed_search(env, repo, "Note 17", "Note 17:")
        git(repo, "checkout", "-q", "main")
        back = timed_search(env, repo, "Note 17", "")
        git(repo, "checkout", "-q", "memory")
        again = timed_search(env, repo, "Note 17", "Note 17:")
        steady = min(timed_search(env, repo, "Note 17", "Note 17:") for _ in range(5))
    print(f"first command after a checkout bringing {args.records} files: {first:7.0f} ms")
    print(f"first command after switching back to main:              {back:7.0f} ms")
    print(f"first command after switching to the branch again:       {again:7.0f} ms")
    print(f"a command when nothing changed (best of 5):              {steady:7.0f} ms")


if __name__ == "__main__":
    main()
