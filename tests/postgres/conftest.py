"""Each test here runs against both stores: the home's SQLite file and the team server (a
real PostgreSQL with pgvector on a loopback port, see tests/pg_cluster.py)."""

from pathlib import Path

import pytest

from tests.conftest import use_server
from tests.daemon.conftest import daemons  # noqa: F401 - real daemons, on either store

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, home: Path) -> str:
    """Which store the test's home uses (its config.toml names the server for postgresql)."""
    if request.param == "postgresql":
        use_server(home, request.getfixturevalue("pg_url"))
    return str(request.param)


@pytest.fixture
def repo(backend: str, repo: Path) -> Path:
    """The attached project, in a home whose store is `backend`'s."""
    return repo
