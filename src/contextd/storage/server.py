"""Opening the team server [store] url names, with one sentence when its client library is
missing (psycopg is the `postgres` extra)."""

from contextd.config import StoreSettings
from contextd.errors import StoreError
from contextd.server_url import redact
from contextd.storage.store import Database

__all__ = ["open_server"]


def open_server(store: StoreSettings, *, connect_timeout_s: float, read_only: bool) -> Database:
    """The store on the server, migrated (checked only when `read_only`).

    Raises:
        StoreError: psycopg is not installed, or the server cannot be used.
        SchemaTooNewError: a newer contextd migrated the server.
    """
    try:
        from contextd.storage.postgres.database import PostgresDatabase
    except ImportError as exc:
        raise StoreError(
            f"[store] url names a PostgreSQL server ({redact(store.url)}) but its client is "
            "not installed; run `pip install 'contextd[postgres]'`."
        ) from exc
    return PostgresDatabase.open_url(
        store.url,
        read_only=read_only,
        connect_timeout_s=connect_timeout_s,
        pool_size=store.pool_size,
    )
