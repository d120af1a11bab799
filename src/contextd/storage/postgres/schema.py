"""Migrating the server's schema: the numbered scripts of storage/sql/postgres/, all pending
ones in one transaction under an advisory lock (several machines may open a new server at
once); a schema newer than this contextd is refused, as in SQLite."""

from typing import Any

import psycopg

from contextd.clock import now
from contextd.errors import SchemaTooNewError, StoreError
from contextd.storage.migrations import known_migrations

__all__ = ["MIGRATION_LOCK", "latest_version", "prepare", "schema_version"]

MIGRATION_LOCK = 0x63747864_0001  # pg_advisory_xact_lock key: one migrating process at a time
_OURS = ("records", "projects", "embeddings")


def latest_version() -> int:
    return known_migrations("postgresql")[-1].version


def schema_version(conn: psycopg.Connection[Any], where: str) -> int | None:
    """The version the server's schema is at; None for a database without contextd's tables.

    Raises:
        StoreError: the database holds tables of the same names that contextd did not make.
    """
    # Only the schema contextd writes into (the first of the search path) counts: a scratch
    # schema in front of a team's store is a store of its own.
    found = conn.execute(
        "SELECT to_regclass(quote_ident(current_schema()) || '._migrations') IS NOT NULL"
    ).fetchone()
    if found is not None and found[0]:
        row = conn.execute("SELECT max(version) FROM _migrations").fetchone()
        return int(row[0]) if row and row[0] is not None else 0
    foreign = conn.execute(
        "SELECT count(*) FROM information_schema.tables "
        "WHERE table_schema = current_schema() AND table_name = ANY(%s)",
        (list(_OURS),),
    ).fetchone()
    if foreign and foreign[0]:
        raise StoreError(
            f"The database at {where} holds tables contextd did not create; it was left "
            "untouched: give contextd a database (or schema) of its own."
        )
    return None


def prepare(conn: psycopg.Connection[Any], where: str, *, read_only: bool) -> None:
    """Bring the server's schema to this contextd's version (or check it, read-only).

    Raises:
        SchemaTooNewError: a newer contextd migrated the server.
        StoreError: the schema is older and this opening may not write, or is not contextd's.
    """
    latest = latest_version()
    version = schema_version(conn, where)
    _refuse_newer(version, latest, where)
    if version == latest:
        return
    if read_only:
        raise StoreError(
            f"The contextd server at {where} has an older schema and must be upgraded first; "
            "run any contextd command once with a role that may write it."
        )
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        version = schema_version(conn, where)  # another machine may have migrated meanwhile
        _refuse_newer(version, latest, where)
        conn.execute(
            "CREATE TABLE IF NOT EXISTS _migrations (version INTEGER PRIMARY KEY, "
            'name TEXT COLLATE "C" NOT NULL, applied_at TEXT COLLATE "C" NOT NULL)'
        )
        for migration in known_migrations("postgresql"):
            if version is not None and migration.version <= version:
                continue
            conn.execute(migration.sql)
            conn.execute(
                "INSERT INTO _migrations(version, name, applied_at) VALUES (%s, %s, %s)",
                (migration.version, migration.name, now()),
            )


def _refuse_newer(version: int | None, latest: int, where: str) -> None:
    if version is not None and version > latest:
        raise SchemaTooNewError(
            f"The contextd server at {where} was migrated by a newer contextd (schema "
            f"{version}, this one knows {latest}); upgrade contextd to use it."
        )
