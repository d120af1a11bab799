"""Opening the team server [store] url names, with one sentence when its client library is
missing (psycopg is the `postgres` extra)."""

from contextd.config import StoreSettings
from contextd.errors import StoreError
from contextd.server_url import redact
from contextd.storage.store import Database

__all__ = ["open_server", "open_url"]


def open_server(store: StoreSettings, *, connect_timeout_s: float, read_only: bool) -> Database:
    """The store on the server [store] names, migrated (checked only when `read_only`).

    Raises:
        StoreError: psycopg is not installed, or the server cannot be used.
        SchemaTooNewError: a newer contextd migrated the server.
    """
    return open_url(
        store.url,
        connect_timeout_s=connect_timeout_s,
        read_only=read_only,
        pool_size=store.pool_size,
    )


def open_url(
    url: str, *, connect_timeout_s: float, read_only: bool = False, pool_size: int = 4
) -> Database:
    """The store on the server at `url` (a postgresql:// URL without a password)."""
    try:
        from contextd.storage.postgres.database import PostgresDatabase
    except ImportError as exc:
        raise StoreError(
            f"{redact(url)} names a PostgreSQL server but its client is not installed; "
            "run `pip install 'contextd[postgres]'`."
        ) from exc
    return PostgresDatabase.open_url(
        url, read_only=read_only, connect_timeout_s=connect_timeout_s, pool_size=pool_size
    )
