"""`contextd serve` tests: each runs against both stores (the home's SQLite file and the team
server, a real PostgreSQL with pgvector on loopback, see tests/pg_cluster.py) where marked
with the `backend` fixture."""

from pathlib import Path

import pytest

from tests.conftest import use_server


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, home: Path) -> str:
    """Which store the home uses. On the server, vectors are off: what is under test here is
    the HTTP surface (tests/postgres covers pgvector), and on some machines the test server's
    pgvector build dies of SIGILL in its distance operator."""
    if request.param == "postgresql":
        config = home / "config.toml"
        text = config.read_text(encoding="utf-8").replace('"hashing"', '"none"')
        config.write_text(text, encoding="utf-8")
        use_server(home, request.getfixturevalue("pg_url"))
    return str(request.param)


def set_serve(home: Path, **values: object) -> None:
    """Add a [serve] section to the home's config.toml."""
    config = home / "config.toml"
    lines = [f"{key} = {value!r}".replace("'", '"') for key, value in values.items()]
    config.write_text(
        config.read_text(encoding="utf-8") + "[serve]\n" + "\n".join(lines) + "\n",
        encoding="utf-8",
    )
