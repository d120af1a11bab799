"""`contextd ui` as a real process: started with --json, its address read from the first line,
stopped with Ctrl-C (SIGINT, or the signal asked for) by its own pid."""

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from msgspec import Struct


class Served(Struct):
    url: str  # with the token
    base: str  # http://127.0.0.1:PORT
    token: str
    process: subprocess.Popen[str]
    output: list[str]  # stdout and stderr, filled in when it stopped


@contextmanager
def running_ui(
    cwd: Path, *args: str, env: dict[str, str] | None = None, stop: int = signal.SIGINT
) -> Iterator[Served]:
    process = subprocess.Popen(
        [sys.executable, "-m", "contextd", "ui", "--json", *args],
        cwd=cwd,
        env=env or os.environ.copy(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    if not first:
        process.kill()
        raise AssertionError(f"contextd ui did not start: {process.communicate()[1]}")
    url = json.loads(first)["url"]
    base, token = url.split("/?token=")
    served = Served(url, base, token, process, [first])
    try:
        yield served
    finally:
        if process.poll() is None:
            process.send_signal(stop)
        out, err = process.communicate(timeout=30)
        served.output += [out, err]
