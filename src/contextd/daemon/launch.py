"""Starting the daemon as a detached process of its own (for `daemon start` and the hooks)."""

import os
import subprocess
import sys
from pathlib import Path

import contextd

__all__ = ["start_detached"]


def start_detached(home: str, log_path: Path | None = None) -> None:
    """Run `contextd daemon run` for `home` in a new session; it exits at once when another
    daemon already serves that home."""
    env = dict(os.environ)
    # Unlike one-shot commands (one BLAS thread, see contextd/__init__.py), the daemon has
    # the machine to itself between prompts: two threads halve a query's embedding time.
    if not contextd.BLAS_THREADS_FROM_USER:
        env["OPENBLAS_NUM_THREADS"] = str(min(2, os.cpu_count() or 1))
    with open(log_path or os.devnull, "ab") as log:
        subprocess.Popen(
            [sys.executable, "-m", "contextd", "--home", home, "daemon", "run"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
