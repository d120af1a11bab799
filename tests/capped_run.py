"""contextd as a real process whose memory is fenced: its address space is limited, so a read
that never ends fails there instead of filling the machine, and its peak resident memory is
reported, so a test can hold a bounded read to what it costs."""

import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

__all__ = ["Outcome", "run_capped"]

_ADDRESS_SPACE = 2 * 1024**3  # far above what a refused read costs, far below /dev/zero's pull


class Outcome(NamedTuple):
    code: int  # the exit code; -9 when the guard had to kill it
    stdout: str
    stderr: str
    peak_mb: float  # its peak resident memory


def run_capped(
    args: list[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stdin: Path | None = None,
    guard_s: float = 90,
) -> Outcome:
    """`python -m contextd ARGS`, killed if still running after `guard_s` (a hang)."""

    def fence() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (_ADDRESS_SPACE, _ADDRESS_SPACE))

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        source = stdin.open("rb") if stdin is not None else subprocess.DEVNULL
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "contextd", *args],
                stdin=source,
                stdout=out,
                stderr=err,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                preexec_fn=fence,
            )
        finally:
            if stdin is not None:
                source.close()  # type: ignore[union-attr]
        status, usage = _reaped(process, guard_s)
        out.seek(0)
        err.seek(0)
        return Outcome(
            os.waitstatus_to_exitcode(status),
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
            usage.ru_maxrss / 1024,
        )


def _reaped(
    process: "subprocess.Popen[bytes]", guard_s: float
) -> tuple[int, resource.struct_rusage]:
    deadline = time.monotonic() + guard_s
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
            return status, usage
        if time.monotonic() > deadline:
            process.kill()
        time.sleep(0.05)
