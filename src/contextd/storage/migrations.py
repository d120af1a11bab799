"""Numbered SQL migrations (storage/sql/NNNN_name.sql), applied in order in one transaction."""

import functools
import re
import sqlite3
from pathlib import Path

from msgspec import Struct

from contextd.clock import now

__all__ = ["Migration", "applied_versions", "apply_pending", "known_migrations", "split_statements"]

_NAME = re.compile(r"^(\d{4})_(\w+)\.sql$")


class Migration(Struct, frozen=True):
    """One numbered SQL migration file."""

    version: int
    name: str
    sql: str


@functools.cache  # read once per process: every open asks for the newest version
def known_migrations(backend: str = "sqlite") -> tuple[Migration, ...]:
    """Every migration shipped with this version of contextd for `backend` ("sqlite", or
    "postgresql": sql/postgres/, whose numbers name the same schema as SQLite's), oldest
    first."""
    found: list[Migration] = []
    # A plain folder beside this module (importlib.resources costs the hooks ~10 imports).
    folder = Path(__file__).parent / "sql"
    if backend != "sqlite":
        folder = folder / "postgres"
    for entry in folder.iterdir():
        match = _NAME.match(entry.name)
        if match:
            sql = entry.read_text(encoding="utf-8")
            found.append(Migration(int(match.group(1)), match.group(2), sql))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise RuntimeError(f"Two migrations share a number: {versions}")
    return tuple(found)


def split_statements(script: str) -> list[str]:
    """Split a SQL script into statements (triggers keep their inner semicolons)."""
    statements: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            if pending.strip():
                statements.append(pending.strip())
            pending = ""
    if pending.strip() and not all(
        part.strip().startswith("--") or not part.strip() for part in pending.splitlines()
    ):
        raise RuntimeError(f"Incomplete SQL statement at the end of a migration: {pending!r}")
    return statements


def applied_versions(conn: sqlite3.Connection) -> set[int]:
    """Versions already applied to this database (empty for a new file)."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_migrations'"
    ).fetchone()
    if not exists:
        return set()
    return {row[0] for row in conn.execute("SELECT version FROM _migrations")}


def apply_pending(conn: sqlite3.Connection) -> list[Migration]:
    """Apply every migration not yet applied; the caller holds the write transaction."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS _migrations "
        "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    done = applied_versions(conn)
    applied: list[Migration] = []
    for migration in known_migrations():
        if migration.version in done:
            continue
        for statement in split_statements(migration.sql):
            conn.execute(statement)
        conn.execute(
            "INSERT INTO _migrations(version, name, applied_at) VALUES (?, ?, ?)",
            (migration.version, migration.name, now()),
        )
        applied.append(migration)
    if applied:  # the newest known, even when an older-numbered one arrived late
        newest = max(done | {m.version for m in applied})
        conn.execute(f"PRAGMA user_version = {newest}")
    return applied
