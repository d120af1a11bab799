"""Migrating a blank store, the identity marks it gets, and re-opening it."""

import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pytest

from contextd.storage.migrations import apply_pending, known_migrations, split_statements
from contextd.storage.sqlite.database import APPLICATION_ID, SqliteDatabase
from contextd.storage.store import Database

EXPECTED_TABLES = {
    "projects",
    "project_paths",
    "records",
    "records_fts",
    "tombstones",
    "sessions",
    "_migrations",
}
EXPECTED_TRIGGERS = {"records_fts_insert", "records_fts_delete", "records_fts_update"}


def _open_and_close(path: Path) -> None:
    SqliteDatabase.open(path).close()


def _plain(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path)


def test_migrating_a_blank_store_creates_every_table_and_the_three_fts_triggers(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.db"
    _open_and_close(path)

    with closing(_plain(path)) as conn:
        tables = {
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'records_fts_%'"
            )
        }
        fts_triggers = {
            name: table
            for name, table, sql in conn.execute(
                "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger'"
            )
            if "records_fts" in sql
        }

    assert tables >= EXPECTED_TABLES  # later migrations may add more
    assert set(fts_triggers) == EXPECTED_TRIGGERS
    assert set(fts_triggers.values()) == {"records"}


def test_a_migrated_store_is_stamped_with_the_latest_version_and_the_contextd_application_id(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.db"
    _open_and_close(path)

    with closing(_plain(path)) as conn:
        user_version = conn.execute("PRAGMA user_version").fetchone()[0]
        application_id = conn.execute("PRAGMA application_id").fetchone()[0]
        applied = [row[0] for row in conn.execute("SELECT version FROM _migrations ORDER BY 1")]

    assert user_version == known_migrations()[-1].version
    assert application_id == APPLICATION_ID
    assert applied == [m.version for m in known_migrations()]


def test_a_migrated_store_keeps_write_ahead_logging_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    _open_and_close(path)

    # WAL is persistent: a fresh connection by another program sees it without being told.
    with closing(_plain(path)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_opening_a_migrated_store_again_applies_nothing(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    _open_and_close(path)
    with closing(_plain(path)) as conn:
        before = conn.execute("SELECT version, name, applied_at FROM _migrations").fetchall()

    _open_and_close(path)
    _open_and_close(path)

    with closing(_plain(path)) as conn:
        after = conn.execute("SELECT version, name, applied_at FROM _migrations").fetchall()
        user_version = conn.execute("PRAGMA user_version").fetchone()[0]
    assert len(before) == len(known_migrations())
    assert after == before
    assert user_version == known_migrations()[-1].version


def test_apply_pending_applies_every_migration_once_and_then_nothing() -> None:
    with closing(sqlite3.connect(":memory:", isolation_level=None)) as conn:
        first = apply_pending(conn)
        second = apply_pending(conn)
        user_version = conn.execute("PRAGMA user_version").fetchone()[0]

    assert [m.version for m in first] == [m.version for m in known_migrations()]
    assert second == []
    assert user_version == known_migrations()[-1].version


def _open_concurrently(path: Path, openers: int) -> list[BaseException]:
    """Open one store from `openers` threads released together; returns what they raised."""
    start = threading.Barrier(openers)
    opened: list[Database] = []
    failures: list[BaseException] = []

    def open_it() -> None:
        start.wait()
        try:
            opened.append(SqliteDatabase.open(path))
        except BaseException as exc:  # collected and asserted on by the caller
            failures.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(openers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    for database in opened:
        database.close()
    assert not any(thread.is_alive() for thread in threads)
    return failures


def test_several_threads_opening_one_fresh_store_at_once_all_succeed_and_migrate_it_once(
    tmp_path: Path,
) -> None:
    for round_number in range(40):
        path = tmp_path / f"fresh-{round_number}.db"

        failures = _open_concurrently(path, openers=6)

        assert [str(exc) for exc in failures] == [], f"round {round_number}"
        with closing(_plain(path)) as conn:
            applied = [r[0] for r in conn.execute("SELECT version FROM _migrations ORDER BY 1")]
        assert applied == [m.version for m in known_migrations()]


def test_split_statements_keeps_a_trigger_body_with_inner_semicolons_as_one_statement() -> None:
    script = (
        "-- leading comment; with a semicolon\n"
        "CREATE TABLE t (a TEXT);\n"
        "CREATE TABLE log (a TEXT);\n"
        "\n"
        "CREATE TRIGGER t_ins AFTER INSERT ON t BEGIN\n"
        "    INSERT INTO log(a) VALUES (new.a);\n"
        "    INSERT INTO log(a) VALUES ('a; b');\n"
        "END;\n"
        "-- trailing comment\n"
    )

    statements = split_statements(script)

    assert len(statements) == 3
    trigger = statements[2]
    assert trigger.startswith("CREATE TRIGGER t_ins")
    assert trigger.endswith("END;")
    assert trigger.count("INSERT INTO log") == 2
    # The pieces really run as written: the trigger fires both of its inserts.
    with closing(sqlite3.connect(":memory:")) as conn:
        for statement in statements:
            conn.execute(statement)
        conn.execute("INSERT INTO t(a) VALUES ('x')")
        assert conn.execute("SELECT a FROM log ORDER BY rowid").fetchall() == [("x",), ("a; b",)]


def test_split_statements_finds_the_shipped_triggers_whole() -> None:
    statements = [s for m in known_migrations() for s in split_statements(m.sql)]

    code = [
        "\n".join(line for line in s.splitlines() if not line.lstrip().startswith("--")).strip()
        for s in statements
    ]
    triggers = {s.split()[2]: s for s in code if s.startswith("CREATE TRIGGER")}
    assert set(triggers) >= EXPECTED_TRIGGERS
    assert all(s.rstrip().endswith("END;") for s in triggers.values())
    update = triggers["records_fts_update"]
    assert update.count("INSERT INTO records_fts") == 2
    assert all(sqlite3.complete_statement(s) for s in statements)


def test_split_statements_refuses_a_script_ending_in_an_unfinished_statement() -> None:
    with pytest.raises(RuntimeError, match="Incomplete SQL statement"):
        split_statements("CREATE TABLE t (a TEXT);\nCREATE TABLE u (b TEXT)\n")


def test_migration_23_gives_the_home_owner_the_personal_records_the_team_held(
    home: Path, tmp_path: Path
) -> None:
    """Before it, a home's personal records had no owner ('', the team's), so `serve` showed
    them to every token; after it they are the owner's ('~'), the team's records untouched."""
    from contextd.app import open_app
    from contextd.config import load_settings
    from contextd.models import DecisionBody, Kind, RecordDraft
    from tests.conftest import make_repo

    repo = make_repo(tmp_path / "orbit", "git@github.com:acme/orbit.git")
    with open_app(load_settings(home=home, cwd=repo)) as app:
        project = app.projects.attach(repo).project
        body = DecisionBody(
            problem="Workers lost tasks whenever the broker restarted during a deploy",
            why_chosen="It keeps durable consumers with acks, so nothing is lost on restart",
        )
        team = app.writer.create(RecordDraft(Kind.DECISION, "Use NATS for tasks", body), project)
        own = RecordDraft(Kind.DECISION, "Keep my notes on NATS", body, private=True)
        mine = app.writer.create(own, project)
    with closing(sqlite3.connect(home / "contextd.db", isolation_level=None)) as conn:
        conn.execute("UPDATE records SET owner = ''")  # as contextd before it wrote them
        conn.execute("UPDATE record_log SET owner = ''")
        migration = next(m for m in known_migrations() if m.version == 23)
        for statement in split_statements(migration.sql):
            conn.execute(statement)
        owners = dict(conn.execute("SELECT id, owner FROM records").fetchall())
        logged = dict(conn.execute("SELECT DISTINCT record_id, owner FROM record_log").fetchall())
    assert owners == {team.id: "", mine.id: "~"}
    assert logged == owners
