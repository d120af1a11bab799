"""Opening the team server [store] url names, with one sentence when its client library is
missing (psycopg is the `postgres` extra)."""

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from contextd import DISTRIBUTION
from contextd.config import StoreSettings
from contextd.errors import StoreError
from contextd.server_url import redact
from contextd.storage.store import Database

__all__ = ["open_server", "open_url", "scratch_url"]


def open_server(
    store: StoreSettings,
    *,
    connect_timeout_s: float,
    read_only: bool,
    statement_timeout_s: float | None = None,
) -> Database:
    """The store on the server [store] names, migrated (checked only when `read_only`);
    with `statement_timeout_s`, a statement or a lock wait longer than that fails.

    Raises:
        StoreError: psycopg is not installed, or the server cannot be used.
        SchemaTooNewError: a newer contextd migrated the server.
    """
    return open_url(
        store.url,
        connect_timeout_s=connect_timeout_s,
        read_only=read_only,
        pool_size=store.pool_size,
        developer_name=store.developer,
        statement_timeout_s=statement_timeout_s,
    )


def open_url(
    url: str,
    *,
    connect_timeout_s: float,
    read_only: bool = False,
    pool_size: int = 4,
    developer_name: str = "",
    statement_timeout_s: float | None = None,
) -> Database:
    """The store on the server at `url` (a postgresql:// URL without a password); its
    developer is the login role, `developer_name` telling apart those who share one."""
    try:
        from contextd.storage.postgres.database import PostgresDatabase
    except ImportError as exc:
        raise StoreError(
            f"{redact(url)} names a PostgreSQL server but its client is not installed; "
            f"run `pip install '{DISTRIBUTION}[postgres]'`."
        ) from exc
    return PostgresDatabase.open_url(
        url,
        read_only=read_only,
        connect_timeout_s=connect_timeout_s,
        pool_size=pool_size,
        developer_name=developer_name,
        statement_timeout_s=statement_timeout_s,
    )


@contextmanager
def scratch_url(url: str, *, connect_timeout_s: float) -> Iterator[str]:
    """A URL naming a new, empty schema on the server at `url` (in front of the search path),
    dropped with everything in it when the block ends: a scratch store that leaves the
    team's own untouched (for `contextd eval`).

    Raises:
        StoreError: the server cannot be reached, or this role may not create a schema.
    """
    import psycopg

    from contextd.storage.postgres.connection import explain

    name = "contextd_scratch_" + secrets.token_hex(6)
    try:
        with psycopg.connect(
            url, autocommit=True, connect_timeout=max(1, round(connect_timeout_s))
        ) as conn:
            conn.execute(f"CREATE SCHEMA {name}")
    except psycopg.Error as exc:
        raise StoreError(explain(redact(url), exc)) from exc
    try:
        yield _with_search_path(url, name)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def _with_search_path(url: str, schema: str) -> str:
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    option = f"-c search_path={schema},public"
    query["options"] = f"{query['options']} {option}" if query.get("options") else option
    return urlunsplit(parts._replace(query=urlencode(query, quote_via=quote)))
