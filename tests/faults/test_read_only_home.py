"""A home on a read-only filesystem is refused in one sentence, and nothing in it changes."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli


def _read_only(home: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """Run `command` with `home` bind-mounted read-only, in a private mount namespace (the
    only way to make root see a read-only folder)."""
    script = f'mount --bind "{home}" "{home}" && mount -o remount,bind,ro "{home}" && ' + " ".join(
        f"'{part}'" for part in command
    )
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", script],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=os.environ.copy(),
        timeout=60,
        check=False,
    )


@pytest.mark.usefixtures("repo")
def test_a_read_only_home_is_refused_and_left_as_it_was(run: Cli, home: Path) -> None:
    if (
        shutil.which("unshare") is None
        or subprocess.run(["unshare", "-rm", "true"], capture_output=True, check=False).returncode
        != 0
    ):
        pytest.skip("this machine cannot make a private mount namespace (unshare -rm)")
    run.json("add", "Builds need Node 20 or newer on every runner", "--category", "gotcha")
    before = {p.name: p.read_bytes() for p in home.iterdir() if p.is_file()}
    done = _read_only(
        home,
        sys.executable,
        "-m",
        "contextd",
        "--project",
        "orbit",
        "add",
        "Deploys run from the release branch only",
        "--category",
        "convention",
    )
    assert done.returncode == 6
    assert done.stderr.startswith("Error: ") and done.stderr.count("\n") == 1
    assert "writable" in done.stderr and "Traceback" not in done.stderr
    after = {p.name: p.read_bytes() for p in home.iterdir() if p.is_file()}
    assert after == before
    assert len(run.json("memories")["records"]) == 1
