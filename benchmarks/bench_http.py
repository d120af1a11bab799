"""`contextd serve` over HTTP against stdio through the daemon: get_context p50/p95 with 1
and 8 concurrent clients on a store of --size records (the local model by default), and
writes per second over HTTP (one client after another, and 8 at once).

Run: .venv/bin/python benchmarks/bench_http.py [--size 10000] [--calls 40]

Each HTTP client is the SDK's Streamable HTTP client with a bearer token; each stdio client
is the SDK's stdio client running `contextd mcp serve` (a relay to the daemon, which hosts
its session over its warm App). The first calls of each setup are not timed (they warm the
caches and load the model).
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import anyio
import httpx2
from bench_retrieval import QUERIES, build, sentence
from mcp.client.streamable_http import streamable_http_client

from mcp import Client, StdioServerParameters

Opener = Callable[[], AbstractAsyncContextManager[Client]]


def contextd(home: Path, *args: str) -> str:
    command = [sys.executable, "-m", "contextd", "--home", str(home), *args]
    done = subprocess.run(command, capture_output=True, text=True, encoding="utf-8", check=True)
    return done.stdout


def http_opener(url: str, token: str) -> Opener:
    @asynccontextmanager
    async def opened() -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=120) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            yield client

    return opened


def stdio_opener(home: Path) -> Opener:
    def opened() -> AbstractAsyncContextManager[Client]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "contextd", "--home", str(home), "--project", "bench", "mcp", "serve"],
            env=dict(os.environ),
        )
        return Client(params)

    return opened


async def reads(open_client: Opener, clients: int, calls: int) -> list[float]:
    """Milliseconds per get_context, `calls` in all spread over `clients` at once."""
    times: list[float] = []

    async def one(n: int) -> None:
        async with open_client() as client:
            for i in range(2):  # warm-up
                await client.call_tool("get_context", {"query": QUERIES[(n + i) % len(QUERIES)]})
            for i in range(calls // clients):
                query = QUERIES[(n * 7 + i) % len(QUERIES)]
                started = time.perf_counter()
                result = await client.call_tool("get_context", {"query": query})
                times.append((time.perf_counter() - started) * 1000)
                assert not result.is_error, result

    async with anyio.create_task_group() as group:
        for n in range(clients):
            group.start_soon(one, n)
    return times


async def writes(open_client: Opener, clients: int, each: int, rng: random.Random) -> float:
    """Records stored per second by `clients` writing `each` one after another, at once."""

    async def one(n: int) -> None:
        async with open_client() as client:
            for i in range(each):
                result = await client.call_tool(
                    "remember",
                    {"text": f"{sentence(rng)} w{n}x{i}", "category": "note", "force": True},
                )
                assert not result.is_error, result

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for n in range(clients):
            group.start_soon(one, n)
    return clients * each / (time.perf_counter() - started)


def line(label: str, times: list[float]) -> None:
    times = sorted(times)
    p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
    median = statistics.median(times)
    print(f"  {label:<34} p50 {median:7.1f} ms   p95 {p95:7.1f} ms  (n={len(times)})")


def rate(label: str, per_second: float) -> None:
    print(f"  {label:<34} {per_second:7.1f} /s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--provider", default="local")
    parser.add_argument(
        "--rate", type=int, default=100_000, help="[serve] requests_per_minute (0: not counted)"
    )
    args = parser.parse_args()
    rng = random.Random(31)
    with tempfile.TemporaryDirectory(prefix="contextd-bench-http-") as scratch:
        home = Path(scratch) / "home"
        home.mkdir(mode=0o700)
        (home / "config.toml").write_text(
            f'[embeddings]\nprovider = "{args.provider}"\n'
            f"[serve]\nrequests_per_minute = {args.rate}\n",
            encoding="utf-8",
        )
        build(home, args.size, 200, rng)
        token = json.loads(
            contextd(home, "token", "create", "bench", "--project", "bench", "--json")
        )["token"]
        serve = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "contextd",
                "--home",
                str(home),
                "serve",
                "--port",
                "0",
                "--json",
            ],
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        assert serve.stdout is not None
        url = json.loads(serve.stdout.readline())["url"]
        contextd(home, "daemon", "start")
        try:
            http, stdio = http_opener(url, token), stdio_opener(home)
            print(f"get_context on {args.size} records ({args.provider} embeddings):")
            line("HTTP, 1 client", anyio.run(reads, http, 1, args.calls))
            line("HTTP, 8 clients at once", anyio.run(reads, http, 8, args.calls))
            line("stdio via the daemon, 1 client", anyio.run(reads, stdio, 1, args.calls))
            line("stdio via the daemon, 8 at once", anyio.run(reads, stdio, 8, args.calls))
            print("writes (remember):")
            rate("HTTP, 1 client", anyio.run(writes, http, 1, 30, rng))
            rate("HTTP, 8 clients at once", anyio.run(writes, http, 8, 10, rng))
            rate("stdio via the daemon, 1 client", anyio.run(writes, stdio, 1, 30, rng))
        finally:
            contextd(home, "daemon", "stop")
            serve.terminate()
            serve.wait(timeout=30)


if __name__ == "__main__":
    main()
