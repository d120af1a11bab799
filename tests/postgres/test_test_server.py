"""The test server itself: it starts where the loader cannot resolve `$ORIGIN` (no readable
/proc/self/exe), and a CI run says in its last lines how many server tests ran."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_START_WITHOUT_PROC = """
import subprocess, sys
subprocess.run(["mount", "-t", "tmpfs", "none", "/proc"], check=True)
sys.path.insert(0, sys.argv[1])
from tests.pg_cluster import start_cluster
cluster = start_cluster()
try:
    print(cluster.psql("SELECT 40 + 2;").strip())
finally:
    cluster.stop()
"""


def _namespace() -> list[str]:
    """A command prefix giving the process a mount namespace of its own, or a skip."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("unshare or mount is not installed here")
    prefix = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-r", "-m"]
    probe = subprocess.run([*prefix, "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"no mount namespace here: {probe.stderr.decode(errors='replace').strip()}")
    return prefix


def test_the_server_starts_where_no_process_can_read_its_own_executable() -> None:
    # /proc hidden under a tmpfs: the loader cannot read /proc/self/exe, so it drops every
    # `$ORIGIN` RPATH, as on hardened machines where only root may read it.
    result = subprocess.run(
        [*_namespace(), sys.executable, "-c", _START_WITHOUT_PROC, str(ROOT)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "42"


def test_a_ci_run_ends_by_saying_how_many_server_tests_ran(tmp_path: Path) -> None:
    chosen = "tests/postgres/test_schema.py"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            chosen,
            "-k",
            "newer or untouched",
            "-p",
            "no:cacheprovider",
            "-q",
        ],
        cwd=ROOT,
        env={**os.environ, "CI": "1"},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-2000:]
    last = result.stdout.strip().splitlines()[-3:]
    assert any(line.startswith("PostgreSQL server tests: 2 ran (2 passed") for line in last), last
