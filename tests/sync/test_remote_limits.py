"""What `remote pull`/`scan`/`push` read from ssh is capped, and the whole operation is timed:
through the real sshd, against remote commands that are real endless or silent processes,
with contextd run as a real process whose memory is fenced."""

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.capped_run import run_capped
from tests.sync.conftest import Machine
from tests.sync.sshd import SshServer

BOUNDED_MB = 200  # the interpreter and contextd's imports, plus what the cap lets in
GUARD_S = 60  # a hang: far beyond the 2 s allowed, far short of the silent remote's 300 s


def _settings(machine: Machine, text: str) -> None:
    config = machine.home / "config.toml"
    config.write_text(config.read_text(encoding="utf-8") + text, encoding="utf-8")


def _remote_command(machine: Machine, sshd: SshServer, folder: Path, body: str) -> None:
    """`far` runs the script `body` there in contextd's place."""
    script = folder / "fake-contextd"
    script.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    script.chmod(0o755)
    added = machine("remote", "add", "far", "lab", "--command", str(script), *sshd.options)
    assert added.exit_code == 0, added.output


@pytest.fixture
def silent_pids(tmp_path: Path) -> Iterator[Path]:
    """Where the silent remote writes its pid; each one left is ended afterwards."""
    pids = tmp_path / "silent.pids"
    yield pids
    for line in pids.read_text(encoding="utf-8").split() if pids.exists() else []:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(line), signal.SIGKILL)


def test_an_endless_pull_is_cut_at_the_bundle_cap(
    laptop: Machine, sshd: SshServer, tmp_path: Path
) -> None:
    _settings(laptop, "[sync]\nmax_bundle_mb = 1\n")
    _remote_command(laptop, sshd, tmp_path, "exec cat /dev/zero")
    done = run_capped(["remote", "pull", "far"], guard_s=GUARD_S)
    assert (done.code, done.stderr) == (
        7,
        "Error: What contextd on lab sent is larger than 1 MB, the most a bundle may be; if it "
        "really is a bundle that large, allow more with `contextd config set "
        "sync.max_bundle_mb 2`.\n",
    )
    assert done.peak_mb < BOUNDED_MB


def test_an_endless_scan_is_cut_at_the_answer_cap(
    laptop: Machine, sshd: SshServer, tmp_path: Path
) -> None:
    _remote_command(laptop, sshd, tmp_path, "exec cat /dev/zero")
    done = run_capped(["remote", "scan", "far"], guard_s=GUARD_S)
    assert (done.code, done.stderr) == (
        7,
        "Error: What contextd on lab sent is larger than 16 MB, the most an answer of contextd "
        "may be; check that --command names contextd there.\n",
    )
    assert done.peak_mb < BOUNDED_MB


@pytest.mark.parametrize("command", ["pull", "scan", "push"])
def test_a_remote_that_never_answers_is_given_up_at_the_time_limit(
    command: str, laptop: Machine, sshd: SshServer, tmp_path: Path, silent_pids: Path
) -> None:
    _settings(laptop, "[sync]\nremote_timeout_s = 2\n")
    _remote_command(laptop, sshd, tmp_path, f"echo $$ >> '{silent_pids}'\nexec sleep 300")
    done = run_capped(["remote", command, "far"], guard_s=GUARD_S)
    assert (done.code, done.stderr) == (
        7,
        "Error: ssh lab did not finish within 2 s, the most a remote operation may take; check "
        "that `ssh lab true` returns at once, or if the link is that slow allow more with "
        "`contextd config set sync.remote_timeout_s 4`.\n",
    )
    assert done.peak_mb < BOUNDED_MB
