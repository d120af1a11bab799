"""The server's schema: versioned like SQLite's (the same numbers name the same schema), a
newer one refused, a database holding someone else's tables left untouched, and every table
known to `store copy`."""

from pathlib import Path

import psycopg
import pytest

from contextd.errors import SchemaTooNewError, StoreError
from contextd.storage.copy import TABLES
from contextd.storage.migrations import known_migrations
from contextd.storage.postgres.database import PostgresDatabase
from tests.conftest import Cli, make_repo, use_server


def test_both_backends_know_the_same_schema_version() -> None:
    # A migration added to one backend needs its twin in the other (sql/ and sql/postgres/).
    assert known_migrations("postgresql")[-1].version == known_migrations()[-1].version


def test_a_new_server_database_is_migrated_once_even_by_racing_openers(pg_url: str) -> None:
    first = PostgresDatabase.open_url(pg_url)
    second = PostgresDatabase.open_url(pg_url)
    first.close()
    second.close()
    with psycopg.connect(pg_url) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM _migrations ORDER BY 1")]
    assert versions == [m.version for m in known_migrations("postgresql")]


def test_a_schema_newer_than_this_contextd_is_refused(pg_url: str) -> None:
    PostgresDatabase.open_url(pg_url).close()
    with psycopg.connect(pg_url) as conn:
        conn.execute("INSERT INTO _migrations VALUES (9999, 'future', 'then')")
    with pytest.raises(SchemaTooNewError) as refused:
        PostgresDatabase.open_url(pg_url)
    assert "schema 9999" in str(refused.value) and "upgrade contextd" in str(refused.value)


def test_a_database_with_tables_contextd_did_not_make_is_left_untouched(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        conn.execute("CREATE TABLE records (what text)")
    with pytest.raises(StoreError) as refused:
        PostgresDatabase.open_url(pg_url)
    assert "did not create" in str(refused.value)
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT to_regclass('_migrations')").fetchone() == (None,)


def test_store_copy_knows_every_table_of_the_schema(pg_url: str) -> None:
    PostgresDatabase.open_url(pg_url).close()
    with psycopg.connect(pg_url) as conn:
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema()"
            )
        }
    assert tables - {"_migrations", "sync_store"} == set(TABLES)


def test_records_stored_before_handles_are_numbered_in_written_order(
    pg_url: str, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As SQLite's 0020: each older record gets a handle, per kind in the order written, and
    the next record of a kind takes the next number."""
    use_server(home, pg_url)
    monkeypatch.chdir(make_repo(tmp_path / "orbit"))
    run = Cli()
    assert run("attach").exit_code == 0
    for n in range(4):
        out = run("add", f"Queue {n} drains every {n + 2} seconds", "--category", "convention")
        assert out.exit_code == 0, out.output
    with psycopg.connect(pg_url) as conn:  # the schema as 0019 left it
        conn.execute("DROP INDEX records_handle")
        conn.execute("DROP TABLE record_handles")
        conn.execute("ALTER TABLE records RENAME COLUMN handle TO short_id")
        conn.execute("UPDATE records SET short_id = substr(id, 1, 8)")
        conn.execute("CREATE INDEX records_short_id ON records(short_id)")
        conn.execute("DELETE FROM _migrations WHERE version = 20")
    PostgresDatabase.open_url(pg_url).close()
    with psycopg.connect(pg_url) as conn:
        stored = [row[0] for row in conn.execute("SELECT handle FROM records ORDER BY created_at")]
    assert stored == ["M1", "M2", "M3", "M4"]
    out = run("add", "Queue 5 drains every 7 seconds", "--category", "convention")
    assert "Recorded memory M5:" in out.stdout
