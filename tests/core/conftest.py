"""Real daemons for the core tests that write through one."""

from tests.daemon.conftest import daemons  # noqa: F401 - the fixture
