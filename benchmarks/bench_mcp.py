"""MCP server timings: spawn -> initialize, tools/list, get_context, over a real stdio client;
the sum up to the first answer, the server's CPU time and its peak resident memory; and the
size of the tool list, the part of it a model reads (names, descriptions, input schemas) apart.

Run: .venv/bin/python benchmarks/bench_mcp.py HOME PROJECT [--rounds N] [--daemon]
(HOME: a store, e.g. one built by bench_retrieval.py; PROJECT: a project in it.)

With --daemon a daemon runs beside the servers and hosts their sessions: each `contextd mcp
serve` is then a standard-library relay, and "server" below means the relay (its CPU time and
peak RSS). The daemon's peak resident memory is printed too, and the two together. With
--daemon --in-process the servers run in-process beside the daemon, each with its own model
(CONTEXTD_MCP_IN_PROCESS=1), as before the daemon hosted sessions. With --writes N one more server
stores N new memories through `remember`, one call after another, as an agent does, and the
rate is printed.
"""

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
from bench_retrieval import sentence

from mcp import Client, StdioServerParameters

PEAKS: list[float] = []  # each server's peak resident memory, read before it exits
LISTED: list[tuple[int, int, int]] = []  # tools; characters a model reads; whole list


async def once(home: str, project: str) -> tuple[float, float, float, float]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "contextd", "--home", home, "--project", project, "mcp", "serve"],
        env=dict(os.environ),
    )
    started = time.perf_counter()
    async with Client(params) as client:
        ready = time.perf_counter()
        tools = (await client.list_tools()).tools
        listed = time.perf_counter()
        LISTED.append(_sizes(tools))
        await client.call_tool("get_context", {"query": "why did we move the task queue"})
        first = time.perf_counter()
        await client.call_tool("get_context", {"query": "how are migrations applied"})
        warm = time.perf_counter()
        PEAKS.extend(_peak_rss_mib(pid) for pid in _servers())
    return ready - started, listed - ready, first - listed, warm - first


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("home")
    parser.add_argument("project")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--daemon", action="store_true", help="run a daemon beside the servers")
    parser.add_argument("--writes", type=int, default=0, help="memories to store through MCP")
    parser.add_argument(
        "--in-process", action="store_true", help="serve in-process even beside a daemon"
    )
    args = parser.parse_args()
    if args.in_process:
        os.environ["CONTEXTD_MCP_IN_PROCESS"] = "1"
    daemon = _start_daemon(args.home) if args.daemon else None
    try:
        _measure(args, daemon)
    finally:
        if daemon is not None:
            _contextd(args.home, "daemon", "stop")


def _measure(args: argparse.Namespace, daemon: int | None) -> None:
    runs, cpu = [], []
    for _ in range(args.rounds):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        runs.append(anyio.run(once, args.home, args.project))
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    for name, values in zip(
        ("spawn+initialize", "tools/list", "first get_context", "warm get_context"),
        zip(*runs, strict=True),
        strict=True,
    ):
        print(f"{name:<18} median {statistics.median(values) * 1000:7.1f} ms")
    first = [ready + listed + answered for ready, listed, answered, _ in runs]
    print(f"{'to first answer':<18} median {statistics.median(first) * 1000:7.1f} ms")
    # CPU time of the whole server process (start, two answers, exit): steadier than wall
    # time on a shared machine.
    print(f"{'server CPU':<18} median {statistics.median(cpu) * 1000:7.1f} ms")
    # Read from /proc while each server ran: the children's ru_maxrss would also count the
    # `contextd daemon start` run beside them.
    count, read, whole = LISTED[-1]
    print(f"{'tool list':<18} {count} tools, {whole / 1024:.1f} KiB with output schemas")
    print(f"{'model reads':<18} {read / 1024:.1f} KiB, about {read // 4} tokens at 4 characters")
    peak = max(PEAKS)
    print(f"{'server peak RSS':<18} {peak:11.0f} MiB")
    if args.writes:
        rate = anyio.run(_writes, args.home, args.project, args.writes)
        print(f"{'writes':<18} {rate:11.1f} records/s ({args.writes} through remember)")
    if daemon is not None:
        held = _peak_rss_mib(daemon)
        print(f"{'daemon peak RSS':<18} {held:11.0f} MiB")
        print(f"{'both together':<18} {held + peak:11.0f} MiB")


async def _writes(home: str, project: str, count: int) -> float:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "contextd", "--home", home, "--project", project, "mcp", "serve"],
        env=dict(os.environ),
    )
    rng = random.Random(uuid.uuid4().int)
    async with Client(params) as client:
        await client.call_tool("get_context", {"query": "warm the server up"})
        started = time.perf_counter()
        for _ in range(count):
            note: dict[str, object] = {"text": sentence(rng), "category": "note"}
            done = await client.call_tool("remember", note)
            if done.is_error and "call again with force=true" in str(done.content):
                # Random sentences sometimes restate one another; as the peers' harness does,
                # store those anyway and count the time.
                done = await client.call_tool("remember", note | {"force": True})
            if done.is_error:
                raise SystemExit(f"remember failed: {done.content}")
        return count / (time.perf_counter() - started)


def _sizes(tools: list[Any]) -> tuple[int, int, int]:
    """How many tools, the characters of what a client hands its model (name, description,
    input schema), and of the whole list as JSON."""
    read = sum(
        len(tool.name) + len(tool.description or "") + len(json.dumps(tool.input_schema))
        for tool in tools
    )
    whole = len(json.dumps([tool.model_dump(by_alias=True, exclude_none=True) for tool in tools]))
    return len(tools), read, whole


def _contextd(home: str, *args: str) -> str:
    command = [sys.executable, "-m", "contextd", "--home", home, *args]
    done = subprocess.run(command, capture_output=True, text=True, encoding="utf-8", check=True)
    return done.stdout


def _start_daemon(home: str) -> int:
    _contextd(home, "daemon", "start")
    return int(Path(home, "daemon.pid").read_text(encoding="ascii"))


def _servers() -> list[int]:
    """This process's `contextd mcp serve` children."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            parent = int((entry / "stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if parent == os.getpid() and b"mcp" in argv and b"serve" in argv:
            found.append(int(entry.name))
    return found


def _peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no process {pid}")


if __name__ == "__main__":
    main()
