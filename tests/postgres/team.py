"""A team server set up exactly as the team-server page's "A team deployment" says
(docs/teams/postgresql.md): its SQL run verbatim as the database's administrator, then a second
developer's login role made from the page's per-developer lines. Both sign in by password over
TCP."""

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from msgspec import Struct

from tests.pg_cluster import PASSWORD, Cluster

__all__ = ["ROLES", "Team", "page_sql", "team_server"]

PAGE = Path(__file__).resolve().parents[2] / "docs" / "teams" / "postgresql.md"
ROLES = ("alice", "bob", "contextd_reader", "contextd_writer", "contextd_owner")
_DEVELOPER_LINES = "-- one login role per developer"


def page_sql(after: str) -> str:
    """The first ```sql block of the team-server page after the line holding `after`."""
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("```sql\n", text.index(after)) + len("```sql\n")
    return text[start : text.index("```", start)]


class Team(Struct, frozen=True):
    database: str
    port: int

    def url(self, role: str) -> str:
        return f"postgresql://{role}@127.0.0.1:{self.port}/{self.database}"


def _second_developer(setup: str, name: str) -> str:
    """The page's lines for one developer's login role (those after its comment, up to the
    next comment), for `name` instead of alice."""
    lines = setup[setup.index(_DEVELOPER_LINES) :].splitlines()[1:]
    own = []
    for line in lines:
        if line.startswith("--"):
            break
        own.append(line.replace("alice", name))
    return "\n".join(own)


@contextmanager
def team_server(cluster: Cluster) -> Iterator[Team]:
    """A new database on the test server with the page's roles, alice (who migrates) and
    bob (a writer); dropped, roles and all, at the end."""
    database = "team_" + uuid.uuid4().hex[:10]
    setup = page_sql("## A team deployment")
    cluster.psql(f"CREATE DATABASE {database};")
    try:
        cluster.psql(setup, database=database)
        cluster.psql(_second_developer(setup, "bob"), database=database)
        cluster.psql(
            "".join(f"ALTER ROLE {who} PASSWORD '{PASSWORD}';" for who in ("alice", "bob"))
        )
        yield Team(database, cluster.port)
    finally:
        cluster.psql(f"DROP DATABASE IF EXISTS {database} WITH (FORCE);")
        cluster.psql(f"DROP ROLE IF EXISTS {', '.join(ROLES)};")
