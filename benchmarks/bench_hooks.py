"""Hook timings: the prompt hook end to end (process start -> output), with and without the
daemon, the session-start hook, and the daemon's resident memory.

Run: .venv/bin/python benchmarks/bench_hooks.py [--size 10000] [--rounds 30]

A store of --size synthetic records is built as bench_retrieval.py builds it (the local model
when installed). Each hook runs as the agent runs it: `contextd hook EVENT` with the payload
on stdin, a new process every time.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_retrieval import QUERIES, build

import random

EXE = str(Path(sys.executable).parent / "contextd")


def hook(env: dict[str, str], event: str, payload: dict[str, object]) -> float:
    started = time.perf_counter()
    subprocess.run(
        [EXE, "hook", event],
        input=json.dumps(payload).encode(),
        env=env,
        check=True,
        capture_output=True,
    )
    return (time.perf_counter() - started) * 1000


def prompt_times(env: dict[str, str], rounds: int, cwd: str) -> list[float]:
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
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        build(home, args.size, args.ingest, random.Random(42))
        env = dict(os.environ, CONTEXTD_HOME=str(home), CONTEXTD_PROJECT="bench")
        (home / "config.toml").write_text("[hooks]\nautostart_daemon = false\n", "utf-8")
        cwd = folder
        start = {"session_id": "bench", "cwd": cwd, "source": "startup"}
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
    print(f"prompt hook, daemon      p50 {statistics.median(with_daemon):6.1f} ms")
    print(f"prompt hook, no daemon   p50 {statistics.median(without):6.1f} ms")
    print(f"session-start, daemon    p50 {statistics.median(session_start_daemon):6.1f} ms")
    print(f"session-start, no daemon p50 {statistics.median(session_start):6.1f} ms")
    print(f"daemon RSS               {rss:6.1f} MB")


if __name__ == "__main__":
    main()
