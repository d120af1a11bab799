"""Web view benchmark: server time per page of `contextd ui` over a store of N records.

Run: .venv/bin/python benchmarks/bench_web.py [--size 10000] [--provider local|hashing]

Builds a synthetic store (benchmarks/bench_retrieval.py's `build`: notes, with vectors), adds
tagged decisions in supersession chains, sessions and checkpoints, starts `contextd ui` as a
real process, and requests each page over HTTP with the launch cookie. The server's own time
comes from the Server-Timing header the view sets on every response (from the request reaching
the app to the page being ready); wall time includes the HTTP round trip. Medians and p95 over
--rounds requests per page; every search asks a different query, so no cache flatters it.
"""

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _one_shot  # noqa: F401  (one BLAS thread, as the CLI runs)
import httpx

from contextd.app import open_app
from contextd.config import load_settings
from contextd.models import CheckpointBody, DecisionBody, Kind, RecordDraft

sys.path.insert(0, str(Path(__file__).parent))
from bench_retrieval import QUERIES, build, sentence  # noqa: E402

TAGS = ("queue", "auth", "billing", "deploy", "schema", "cache", "infra", "api")


def enrich(home: Path, rng: random.Random, chains: int) -> str:
    """Tagged decisions in chains of four (each replacing the last), sessions with checkpoints;
    returns the id of a record in the middle of a chain."""
    middle = ""
    with open_app(load_settings(home=home)) as app:
        project = app.projects.ensure("bench")
        for chain in range(chains):
            previous: list[str] = []
            for step in range(4):
                draft = RecordDraft(
                    Kind.DECISION,
                    f"Decision {chain}.{step}: {sentence(rng)}",
                    DecisionBody(
                        problem=f"Problem of chain {chain}: {sentence(rng)} {sentence(rng)}",
                        why_chosen=f"Because {sentence(rng)} {sentence(rng)} {sentence(rng)}",
                    ),
                    tags=tuple(rng.sample(TAGS, 2)),
                )
                made = app.writer.create(draft, project, supersedes=previous, force=True)
                previous = [made.id]
                if chain == 0 and step == 1:
                    middle = made.id
        for index in range(60):
            app.sessions.start(project, rng.choice(("claude", "codex", "cursor")))
            checkpoint = RecordDraft(
                Kind.CHECKPOINT,
                f"Checkpoint {index}: {sentence(rng)}",
                CheckpointBody(goal=sentence(rng), next=(sentence(rng),)),
            )
            app.writer.create(checkpoint, project, force=True)
            app.sessions.end_open(project, sentence(rng))
    return middle


def serve(home: Path) -> tuple[subprocess.Popen[str], str, str]:
    exe = str(Path(sys.executable).parent / "contextd")
    process = subprocess.Popen(
        [exe, "--home", str(home), "ui", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
    )
    assert process.stdout is not None
    announced = json.loads(process.stdout.readline())
    base = announced["url"].split("/?")[0]
    return process, base, f"contextd_ui_{announced['port']}={announced['url'].split('=')[1]}"


def time_page(client: httpx.Client, path: str, rounds: int) -> tuple[list[float], list[float]]:
    server, wall = [], []
    for round_ in range(rounds):
        url = path.replace("{n}", str(round_))
        started = time.perf_counter()
        response = client.get(url)
        wall.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            raise SystemExit(f"{url} answered {response.status_code}")
        server.append(float(response.headers["server-timing"].split("dur=")[1]))
    return server, wall


def p95(values: list[float]) -> float:
    return sorted(values)[int(0.95 * (len(values) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--ingest", type=int, default=200, help="records embedded for real")
    parser.add_argument("--provider", default="local", help="embedding provider of the store")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    rng = random.Random(42)
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        (home / "config.toml").write_text(
            f'[embeddings]\nprovider = "{args.provider}"\n', encoding="utf-8"
        )
        build(home, args.size - 260, args.ingest, rng)
        middle = enrich(home, rng, chains=50)
        pages = {
            "projects": "/",
            "records (newest 50)": "/p/bench/records",
            "records, all statuses, page 20": "/p/bench/records?status=all&page=20",
            "records, tag filter": "/p/bench/records?tag=queue&status=all",
            "search": "/p/bench/records?q=" + QUERIES[0].replace(" ", "+") + "+{n}",
            "search + explain": "/p/bench/records?explain=1&q=deploy+rollback+{n}",
            "record + history graph": f"/r/{middle}",
            "sessions timeline": "/p/bench/sessions",
            "quality + stale": "/p/bench/quality",
        }
        process, base, cookie = serve(home)
        try:
            with httpx.Client(base_url=base, headers={"cookie": cookie}, timeout=60) as client:
                for path in pages.values():  # warm: templates compiled, model and matrix loaded
                    time_page(client, path.replace("{n}", "warm"), 2)
                print(f"{args.size} records, provider {args.provider}, {args.rounds} rounds")
                print(f"{'page':<32} {'server p50':>11} {'p95':>8} {'wall p50':>10}")
                for name, path in pages.items():
                    server, wall = time_page(client, path, args.rounds)
                    print(
                        f"{name:<32} {statistics.median(server):>9.1f}ms {p95(server):>6.1f}ms "
                        f"{statistics.median(wall):>8.1f}ms",
                        flush=True,
                    )
        finally:
            os.kill(process.pid, signal.SIGINT)
            process.wait(timeout=30)


if __name__ == "__main__":
    main()
