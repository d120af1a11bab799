"""The daemon's client paths, optionally side by side with another contextd install: the
prompt hook end to end and `contextd search` answered by a running daemon, and the daemon's
resident memory, over one store.

Run: .venv/bin/python benchmarks/bench_daemon.py [--size 10000] [--rounds 30]
         [--against /path/to/other/.venv/bin/contextd]

Each install starts its own daemon on the same store in turn (two rounds each, alternating,
so drift on a shared machine falls on both); every hook, search and `add` is a new process, as
an agent and a person run them. Writes are timed with the daemon and then without it.
"""

import argparse
import compileall
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_retrieval import QUERIES, build

import contextd

EXE = str(Path(sys.executable).parent / "contextd")


def timed(command: list[str], env: dict[str, str], stdin: bytes = b"") -> float:
    started = time.perf_counter()
    done = subprocess.run(command, input=stdin, env=env, capture_output=True, check=False)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{command} failed: {done.stderr.decode(errors='replace')}")
    return elapsed


def daemon(exe: str, env: dict[str, str], action: str) -> dict[str, object]:
    done = subprocess.run(
        [exe, "daemon", action, "--json"],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    return dict(json.loads(done.stdout))


def one_round(exe: str, env: dict[str, str], rounds: int, cwd: str) -> dict[str, list[float]]:
    daemon(exe, env, "start")
    try:
        prompts = [
            json.dumps({"session_id": f"b{i}", "cwd": cwd, "prompt": QUERIES[i % len(QUERIES)]})
            for i in range(rounds + 3)
        ]
        for payload in prompts[:3]:  # the first answers warm the daemon's caches
            timed([exe, "hook", "prompt"], env, payload.encode())
        hook = [timed([exe, "hook", "prompt"], env, p.encode()) for p in prompts[3:]]
        search = [
            timed([exe, "search", f"{QUERIES[i % len(QUERIES)]} {i}"], env) for i in range(rounds)
        ]
        rss = float(str(daemon(exe, env, "status")["rss_mb"]))
        writes = [timed([exe, *note(i, "warm")], env) for i in range(rounds)]
    finally:
        daemon(exe, env, "stop")
    alone = [timed([exe, *note(i, "cold")], env) for i in range(max(3, rounds // 3))]
    return {"hook": hook, "search": search, "rss": [rss], "write": writes, "write alone": alone}


def note(i: int, label: str) -> list[str]:
    """A CLI write no other round repeats (a restatement would be refused)."""
    words = " ".join(QUERIES[(i * 7 + k) % len(QUERIES)].split()[0] for k in range(4))
    text = f"Bench {label} note {i} {os.getpid()}: {words}"
    return ["add", text, "--category", "gotcha", "--force"]  # alike on purpose: no refusal


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--ingest", type=int, default=200, help="records embedded for real")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--against", help="another install's contextd executable")
    args = parser.parse_args()
    compileall.compile_dir(Path(contextd.__file__).parent, quiet=1)
    installs = {"this": EXE} | ({"other": args.against} if args.against else {})
    results: dict[str, dict[str, list[float]]] = {
        name: {"hook": [], "search": [], "rss": [], "write": [], "write alone": []}
        for name in installs
    }
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        build(home, args.size, args.ingest, random.Random(42))
        (home / "config.toml").write_text("[hooks]\nautostart_daemon = false\n", "utf-8")
        env = dict(os.environ, CONTEXTD_HOME=str(home), CONTEXTD_PROJECT="bench")
        for _ in range(2):
            for name, exe in installs.items():
                for key, values in one_round(exe, env, args.rounds, folder).items():
                    results[name][key] += values
    print(f"store: {args.size} records, {args.rounds} x 2 runs of each")
    for name, exe in installs.items():
        got = results[name]
        print(
            f"{name:5s} prompt hook p50 {statistics.median(got['hook']):6.1f} ms  "
            f"search p50 {statistics.median(got['search']):6.1f} ms  "
            f"daemon RSS {max(got['rss']):6.1f} MB  ({exe})"
        )
        print(
            f"      add p50 with the daemon {statistics.median(got['write']):6.1f} ms "
            f"({1000 / statistics.median(got['write']):4.1f}/s), without "
            f"{statistics.median(got['write alone']):6.1f} ms"
        )


if __name__ == "__main__":
    main()
