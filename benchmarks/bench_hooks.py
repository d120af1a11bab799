"""Hook timings: the prompt hook end to end (process start -> output), with and without the
daemon, the session-start hook, and the daemon's resident memory.

Run: .venv/bin/python benchmarks/bench_hooks.py [--size 10000] [--rounds 30]

A store of --size synthetic records is built as bench_retrieval.py builds it (the local model
when installed). Each hook runs as the agent runs it: `contextd hook EVENT` with the payload
on stdin, a new process every time. The package's bytecode is compiled first, as installing it
does: a checkout run with PYTHONDONTWRITEBYTECODE would otherwise compile every module it
imports on every hook. Each line also gives the hook process's CPU time (steadier than wall
time on a shared machine; with the daemon, its work is not counted).
"""

import argparse
import compileall
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_retrieval import QUERIES, build

import contextd

EXE = str(Path(sys.executable).parent / "contextd")


def hook(env: dict[str, str], event: str, payload: dict[str, object]) -> tuple[float, float]:
    """Wall and CPU milliseconds of one hook process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [EXE, "hook", event],
        input=json.dumps(payload).encode(),
        env=env,
        check=True,
        capture_output=True,
    )
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000
    return wall, cpu


def timed(runs: list[tuple[float, float]]) -> str:
    wall = statistics.median(w for w, _ in runs)
    cpu = statistics.median(c for _, c in runs)
    return f"p50 {wall:6.1f} ms (cpu {cpu:5.1f} ms)"


def prompt_times(env: dict[str, str], rounds: int, cwd: str) -> list[tuple[float, float]]:
    return [
        hook(
            env,
            "prompt",
            {"session_id": f"bench-{i}", "cwd": cwd, "prompt": QUERIES[i % len(QUERIES)]},
        )
        for i in range(rounds)
    ]


def daemon(env: dict[str, str], action: str) -> dict[str, object]:
    done = subprocess.run(
        [EXE, "daemon", action, "--json"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    return dict(json.loads(done.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--ingest", type=int, default=200, help="records embedded for real")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    compileall.compile_dir(Path(contextd.__file__).parent, quiet=1)
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        build(home, args.size, args.ingest, random.Random(42))
        env = dict(os.environ, CONTEXTD_HOME=str(home), CONTEXTD_PROJECT="bench")
        (home / "config.toml").write_text("[hooks]\nautostart_daemon = false\n", "utf-8")
        cwd = folder
        start: dict[str, object] = {"session_id": "bench", "cwd": cwd, "source": "startup"}
        without = prompt_times(env, args.rounds, cwd)
        session_start = [hook(env, "session-start", start) for _ in range(5)]
        daemon(env, "start")
        try:
            prompt_times(env, 3, cwd)  # first answers warm the daemon's caches
            with_daemon = prompt_times(env, args.rounds, cwd)
            session_start_daemon = [hook(env, "session-start", start) for _ in range(5)]
            rss = daemon(env, "status")["rss_mb"]
        finally:
            daemon(env, "stop")
    print(f"store: {args.size} records")
    print(f"prompt hook, daemon      {timed(with_daemon)}")
    print(f"prompt hook, no daemon   {timed(without)}")
    print(f"session-start, daemon    {timed(session_start_daemon)}")
    print(f"session-start, no daemon {timed(session_start)}")
    print(f"daemon RSS               {rss:6.1f} MB")


if __name__ == "__main__":
    main()
