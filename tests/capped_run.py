"""contextd as a real process whose memory is fenced: its address space is limited, so a read
that never ends fails there instead of filling the machine, and its peak resident memory is
reported, so a test can hold a bounded read to what it costs.

The peak is the process's own (VmHWM, read as it exits): the rusage of a child counts the
memory of the test process it was forked from."""

import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

__all__ = ["Outcome", "run_capped"]

_ADDRESS_SPACE = 2 * 1024**3  # far above what a refused read costs, far below /dev/zero's pull
_SHIM = (
    "import atexit, os, resource, sys\n"
    f"resource.setrlimit(resource.RLIMIT_AS, ({_ADDRESS_SPACE}, {_ADDRESS_SPACE}))\n"
    "out = os.environ.pop('CONTEXTD_TEST_PEAK')\n"
    "def peak():\n"
    "    with open('/proc/self/status', encoding='ascii') as status:\n"
    "        kb = next(line.split()[1] for line in status if line.startswith('VmHWM:'))\n"
    "    with open(out, 'w', encoding='ascii') as handle:\n"
    "        handle.write(kb)\n"
    "atexit.register(peak)\n"
    "sys.argv[0] = 'contextd'\n"
    "from contextd.__main__ import main\n"
    "main()\n"
)


class Outcome(NamedTuple):
    code: int  # the exit code; -9 when the guard had to kill it
    stdout: str
    stderr: str
    peak_mb: float  # its peak resident memory (0 when it was killed)


def run_capped(
    args: list[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stdin: Path | None = None,
    guard_s: float = 90,
) -> Outcome:
    """`contextd ARGS` in a fresh interpreter, killed if still running after `guard_s` (a
    hang)."""
    with tempfile.TemporaryDirectory() as scratch:
        peak = Path(scratch) / "peak"
        environment = {**(env if env is not None else os.environ), "CONTEXTD_TEST_PEAK": str(peak)}
        source = stdin.open("rb") if stdin is not None else None
        try:
            done = subprocess.run(
                [sys.executable, "-c", _SHIM, *args],
                stdin=source if source is not None else subprocess.DEVNULL,
                capture_output=True,
                env=environment,
                cwd=cwd,
                timeout=guard_s,
                check=False,
            )
        except subprocess.TimeoutExpired as hung:
            return Outcome(-9, _text(hung.stdout), _text(hung.stderr), 0.0)
        finally:
            if source is not None:
                source.close()
        kb = int(peak.read_text(encoding="ascii")) if peak.exists() else 0
        return Outcome(done.returncode, _text(done.stdout), _text(done.stderr), kb / 1024)


def _text(data: bytes | str | None) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data or ""
