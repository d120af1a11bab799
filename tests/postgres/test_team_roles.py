"""The team-server page's role setup on the real server, run verbatim: the first developer's command
migrates as the owner role, so the second developer can use the store too; a role that may
not migrate is told who may; tables an earlier contextd left owned by a developer are named,
and the page's repair SQL gives them back."""

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from contextd.app import App, open_app
from contextd.config import load_settings
from contextd.errors import StoreError
from contextd.models import DecisionBody, Kind, RecordDraft, SearchQuery
from tests.conftest import make_repo
from tests.pg_cluster import PASSWORD, Cluster
from tests.postgres.team import Team, page_sql, team_server


@pytest.fixture
def team(pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> Iterator[Team]:
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    with team_server(pg_cluster) as server:
        yield server


def _home(tmp_path: Path, team: Team, role: str) -> Path:
    home = tmp_path / f"home-{role}"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text(
        '[embeddings]\nprovider = "hashing"\n[hooks]\nautostart_daemon = false\n'
        f'[store]\nurl = "{team.url(role)}"\n',
        encoding="utf-8",
    )
    return home


def _decision(title: str) -> RecordDraft:
    return RecordDraft(
        kind=Kind.DECISION,
        title=title,
        body=DecisionBody(
            problem="Workers lost tasks whenever the broker restarted during a deploy",
            why_chosen="It keeps durable consumers with acks, so nothing is lost on restart",
        ),
    )


def _use(app: App, repo: Path, title: str) -> None:
    """Attach the repository (once per store) and record a decision there."""
    project = app.projects.attach(repo).project
    app.writer.create(_decision(title), project)


def test_both_developers_use_the_store_after_the_first_one_migrated(
    team: Team, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "orbit", "git@github.com:acme/orbit.git")
    with open_app(load_settings(home=_home(tmp_path, team, "alice"), cwd=repo)) as alice:
        _use(alice, repo, "Use NATS JetStream for the task queue")
    with open_app(load_settings(home=_home(tmp_path, team, "bob"), cwd=repo)) as bob:
        _use(bob, repo, "Keep deploy scripts in the repository")
        project = bob.current_project()
        titles = {r.title for r in bob.reader.list_records(project)}
        assert titles == {
            "Use NATS JetStream for the task queue",
            "Keep deploy scripts in the repository",
        }
        found = bob.search.search(project, SearchQuery(text="task queue broker", limit=3))
        assert found.hits
    with psycopg.connect(team.url("bob")) as conn:
        owners = {
            row[0]
            for row in conn.execute(
                "SELECT tableowner FROM pg_tables WHERE schemaname = 'contextd'"
            )
        }
    assert owners == {"contextd_owner"}


def test_a_role_that_may_not_migrate_is_told_who_may(team: Team, tmp_path: Path) -> None:
    bob = load_settings(home=_home(tmp_path, team, "bob"), cwd=tmp_path)
    with pytest.raises(StoreError) as refused, open_app(bob):
        pass
    message = str(refused.value)
    assert "role bob may not create one" in message
    assert "as a member of contextd_owner (the owner of schema contextd)" in message
    with psycopg.connect(team.url("bob")) as conn:  # nothing was created by bob
        assert conn.execute("SELECT to_regclass('contextd._migrations')").fetchone() == (None,)


def test_tables_left_owned_by_a_developer_are_named_and_the_documented_repair_gives_them_back(
    team: Team, tmp_path: Path, pg_cluster: Cluster
) -> None:
    repo = make_repo(tmp_path / "orbit", "git@github.com:acme/orbit.git")
    with open_app(load_settings(home=_home(tmp_path, team, "alice"), cwd=repo)) as alice:
        _use(alice, repo, "Use NATS JetStream for the task queue")
    # What an earlier contextd left: every table created by alice herself, so the owner's
    # default privileges never applied to them.
    pg_cluster.psql(
        "DO $$ DECLARE t record; BEGIN FOR t IN SELECT tablename FROM pg_tables "
        "WHERE schemaname = 'contextd' LOOP "
        "EXECUTE format('ALTER TABLE contextd.%I OWNER TO alice', t.tablename); "
        "EXECUTE format('REVOKE ALL ON contextd.%I FROM contextd_writer, contextd_reader', "
        "t.tablename); END LOOP; END $$;",
        database=team.database,
    )
    bob_home = _home(tmp_path, team, "bob")
    with pytest.raises(StoreError) as refused, open_app(load_settings(home=bob_home, cwd=repo)):
        pass
    message = str(refused.value)
    assert "they are owned by role alice, not by contextd_owner" in message
    assert "REASSIGN OWNED BY alice TO contextd_owner;" in message

    with psycopg.connect(team.url("alice"), autocommit=True) as conn:
        conn.execute(page_sql("## Tables owned by a developer's role"))  # type: ignore[arg-type]
    with open_app(load_settings(home=bob_home, cwd=repo)) as bob:
        _use(bob, repo, "Keep deploy scripts in the repository")
        assert len(bob.reader.list_records(bob.current_project())) == 2
