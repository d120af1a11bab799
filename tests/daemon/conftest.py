"""The `daemons` fixture: real daemon processes, all stopped when the test ends."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemon._support import Daemons, alive
from tests.hooks._support import daemon_processes


@pytest.fixture
def daemons(home: Path, repo: Path) -> Iterator[Daemons]:
    control = Daemons(home, repo)
    try:
        yield control
    finally:
        control.shutdown()
    assert all(not alive(pid) for pid in control.pids)
    assert daemon_processes(home) == []
