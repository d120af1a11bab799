"""A bundle is read bounded: a file, a device, a FIFO or stdin gives at most the cap plus one
byte (`sync.max_bundle_mb`), a regular file larger than it is refused from its size, and the
refusal is one sentence naming the limit and the setting. Run as real processes with their
memory fenced, so an unbounded read fails the test instead of filling the machine."""

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.capped_run import run_capped
from tests.sync.conftest import NOTES, Machine

ONE_MB = "[sync]\nmax_bundle_mb = 1\n"
REFUSED = (
    "is larger than 1 MB, the most a bundle may be; if it really is a bundle that large, "
    "allow more with `contextd config set sync.max_bundle_mb 2`."
)
BOUNDED_MB = 200  # the interpreter and contextd's imports, plus the 1 MB read


def _limit(machine: Machine, settings: str = ONE_MB) -> None:
    config = machine.home / "config.toml"
    config.write_text(config.read_text(encoding="utf-8") + settings, encoding="utf-8")


@pytest.fixture
def endless_fifo(tmp_path: Path) -> Iterator[Path]:
    """A FIFO a real `cat /dev/zero` keeps writing to."""
    fifo = tmp_path / "bundle.fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"exec cat /dev/zero > '{fifo}'"])
    try:
        yield fifo
    finally:
        writer.kill()
        writer.wait()


def test_dev_zero_is_refused_once_the_cap_is_read(laptop: Machine) -> None:
    _limit(laptop)
    done = run_capped(["bundle", "import", "--file", "/dev/zero"])
    assert (done.code, done.stderr) == (2, f"Error: /dev/zero {REFUSED}\n")
    assert done.peak_mb < BOUNDED_MB


def test_an_endless_fifo_is_refused_once_the_cap_is_read(
    laptop: Machine, endless_fifo: Path
) -> None:
    _limit(laptop)
    done = run_capped(["bundle", "import", "--file", str(endless_fifo)])
    assert (done.code, done.stderr) == (2, f"Error: {endless_fifo} {REFUSED}\n")
    assert done.peak_mb < BOUNDED_MB


def test_an_endless_stdin_is_refused_once_the_cap_is_read(laptop: Machine) -> None:
    _limit(laptop)
    done = run_capped(["bundle", "import", "--file", "-"], stdin=Path("/dev/zero"))
    assert (done.code, done.stderr) == (2, f"Error: The bundle on stdin {REFUSED}\n")
    assert done.peak_mb < BOUNDED_MB


def test_a_huge_file_is_refused_from_its_size_at_the_default_cap(
    laptop: Machine, tmp_path: Path
) -> None:
    huge = tmp_path / "huge.json"
    with huge.open("wb") as handle:
        handle.truncate(64 * 1024**3)  # sparse: 64 GB that take no disk
    done = run_capped(["bundle", "import", "--file", str(huge)])
    assert done.code == 2
    assert done.stderr == (
        f"Error: {huge} is larger than 256 MB, the most a bundle may be; if it really is a "
        "bundle that large, allow more with `contextd config set sync.max_bundle_mb 512`.\n"
    )
    assert done.peak_mb < BOUNDED_MB


def test_a_bundle_under_the_cap_still_imports_and_the_cap_can_be_raised(
    laptop: Machine, lab: Machine, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    lab.note(NOTES[0])
    path = tmp_path / "carry.json"
    assert lab("bundle", "export", "--out", str(path)).exit_code == 0
    _limit(laptop)
    assert laptop.json("bundle", "import", "--file", str(path))["added"] == 1
    raised = laptop("config", "set", "sync.max_bundle_mb", "2")
    assert raised.exit_code == 0, raised.output
    assert laptop.json("config")["settings"]["sync"]["max_bundle_mb"] == 2
    refused = laptop("config", "set", "sync.max_bundle_mb", "0")
    assert refused.exit_code == 2 and "greater than 0" in refused.output
