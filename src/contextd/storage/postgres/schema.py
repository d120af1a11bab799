"""Migrating the server's schema: the numbered scripts of storage/sql/postgres/, all pending
ones in one transaction under an advisory lock (several machines may open a new server at
once); a schema newer than this contextd is refused, as in SQLite.

Migrations run as the role that owns contextd's tables (for a new store, the owner of the
schema they go in): a login role that is a member of it takes it for the migration's
transaction (SET LOCAL ROLE), so the tables are the owner's and the privileges the owner's
default ACL grants reach every developer's role. A role that may not migrate is told who may.
"""

from typing import Any, NamedTuple

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql

from contextd.clock import now
from contextd.errors import SchemaTooNewError, StoreError
from contextd.storage.migrations import Migration, known_migrations

__all__ = ["MIGRATION_LOCK", "latest_version", "prepare", "schema_version"]

MIGRATION_LOCK = 0x63747864_0001  # pg_advisory_xact_lock key: one migrating process at a time
_OURS = ("records", "projects", "embeddings")


def latest_version() -> int:
    return known_migrations("postgresql")[-1].version


def schema_version(conn: psycopg.Connection[Any], where: str) -> int | None:
    """The version the server's schema is at; None for a database without contextd's tables.
    Its newest migration: see `applied_versions` for the ones an older-numbered late arrival
    still needs.

    Raises:
        StoreError: the database holds tables of the same names that contextd did not make.
    """
    # Only the schema contextd writes into (the first of the search path) counts: a scratch
    # schema in front of a team's store is a store of its own.
    found = conn.execute(
        "SELECT to_regclass(quote_ident(current_schema()) || '._migrations') IS NOT NULL"
    ).fetchone()
    if found is not None and found[0]:
        try:
            done = applied_versions(conn)
        except pg_errors.InsufficientPrivilege:
            raise StoreError(_locked_out(conn, where)) from None
        return max(done, default=0)
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


def applied_versions(conn: psycopg.Connection[Any]) -> set[int]:
    return {int(row[0]) for row in conn.execute("SELECT version FROM _migrations")}


def _pending(conn: psycopg.Connection[Any], version: int | None) -> list[Migration]:
    """The migrations not applied yet, an older-numbered one that arrived late included."""
    done = set() if version is None else applied_versions(conn)
    return [m for m in known_migrations("postgresql") if m.version not in done]


def prepare(conn: psycopg.Connection[Any], where: str, *, read_only: bool) -> None:
    """Bring the server's schema to this contextd's version (or check it, read-only).

    Raises:
        SchemaTooNewError: a newer contextd migrated the server.
        StoreError: the schema is older and this opening may not write, or is not contextd's.
    """
    latest = latest_version()
    version = schema_version(conn, where)
    _refuse_newer(version, latest, where)
    if not _pending(conn, version):
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
        pending = _pending(conn, version)
        if not pending:
            return
        _act_as_owner(conn, where, version, latest)
        conn.execute(
            "CREATE TABLE IF NOT EXISTS _migrations (version INTEGER PRIMARY KEY, "
            'name TEXT COLLATE "C" NOT NULL, applied_at TEXT COLLATE "C" NOT NULL)'
        )
        for migration in pending:
            conn.execute(migration.sql)
            conn.execute(
                "INSERT INTO _migrations(version, name, applied_at) VALUES (%s, %s, %s)",
                (migration.version, migration.name, now()),
            )


class _Roles(NamedTuple):
    """Who is who for a migration."""

    me: str  # this login's current role
    schema: str | None  # the schema contextd writes into; None when the search path has none
    owner: str  # of contextd's tables; for a new store, of the schema
    schema_owner: str
    may_create: bool  # in the schema, as this role


def _roles(conn: psycopg.Connection[Any]) -> _Roles:
    row = conn.execute(
        "SELECT current_user, n.nspname, coalesce("
        "  (SELECT tableowner FROM pg_tables WHERE schemaname = n.nspname "
        "   AND tablename = '_migrations'), pg_get_userbyid(n.nspowner)), "
        "  pg_get_userbyid(n.nspowner), coalesce(has_schema_privilege(n.oid, 'CREATE'), false) "
        "FROM (SELECT 1) AS one LEFT JOIN pg_namespace AS n ON n.nspname = current_schema()"
    ).fetchone()
    assert row is not None
    me, schema, owner, schema_owner, may_create = row
    return _Roles(str(me), schema, str(owner or ""), str(schema_owner or ""), bool(may_create))


def _may_become(conn: psycopg.Connection[Any], role: str) -> bool:
    """Whether this login may SET ROLE to `role` (a member; with SET, from PostgreSQL 16)."""
    option = "SET" if conn.info.server_version >= 160000 else "MEMBER"
    found = conn.execute("SELECT pg_has_role(%s, %s)", (role, option)).fetchone()
    return bool(found and found[0])


def _act_as_owner(
    conn: psycopg.Connection[Any], where: str, version: int | None, latest: int
) -> None:
    """Take the role that owns contextd's tables for this transaction, or refuse in one
    sentence naming who may migrate.

    Raises:
        StoreError: this login is not that role, may not take it, and may not migrate as
            itself.
    """
    roles = _roles(conn)
    if roles.schema is None:
        raise StoreError(
            f"The contextd server at {where} gives role {roles.me} no schema to create "
            "contextd's tables in (its search_path names none that exists); set the role's "
            "search_path to contextd's schema."
        )
    if roles.owner == roles.me:
        return
    # pg_database_owner (the public schema from PostgreSQL 15 on) is a role no one may take;
    # its database's owner creates in it as themself.
    if roles.owner != "pg_database_owner" and _may_become(conn, roles.owner):
        conn.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(roles.owner)))
        return
    if version is None and roles.may_create:
        return  # a new store in a schema this role may create in: its tables are its own
    if version is None:
        state, step, owned = "no contextd store yet", "create one", f"schema {roles.schema}"
    else:
        state, step, owned = f"a store at schema {version}", f"migrate it to {latest}", "its tables"
    raise StoreError(
        f"The contextd server at {where} has {state}, and role {roles.me} may not {step}: "
        f"run any contextd command once as a member of {roles.owner} (the owner of {owned}), "
        "as the team-server guide (docs/teams/postgresql.md) sets up."
    )


def _locked_out(conn: psycopg.Connection[Any], where: str) -> str:
    """Why this role may not read contextd's tables, and what to run about it."""
    roles = _roles(conn)
    if roles.owner not in (roles.schema_owner, "pg_database_owner"):
        return (
            f"The contextd server at {where} refused role {roles.me} the tables in schema "
            f"{roles.schema}: they are owned by role {roles.owner}, not by {roles.schema_owner} "
            "that owns the schema, so the privileges that owner grants never reached them; "
            f"as {roles.owner}, run `REASSIGN OWNED BY {roles.owner} TO "
            f"{roles.schema_owner};` and grant the tables again (the team-server guide, "
            "docs/teams/postgresql.md, gives the SQL)."
        )
    return (
        f"The contextd server at {where} gives role {roles.me} no access to the tables in "
        f"schema {roles.schema} (owned by {roles.owner}); grant it the writer role the "
        "team-server guide (docs/teams/postgresql.md) sets up."
    )


def _refuse_newer(version: int | None, latest: int, where: str) -> None:
    if version is not None and version > latest:
        raise SchemaTooNewError(
            f"The contextd server at {where} was migrated by a newer contextd (schema "
            f"{version}, this one knows {latest}); upgrade contextd to use it."
        )
