"""A psycopg connection that speaks the storage modules' SQL: `?` placeholders become `%s`,
and every failure arrives as one StoreError sentence naming the server."""

import functools
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from contextd.errors import StoreError
from contextd.storage.postgres.dialect import PostgresDialect
from contextd.storage.postgres.fulltext import TSVECTOR

__all__ = ["PgConnection", "explain", "placeholders"]


@functools.lru_cache(maxsize=1024)
def placeholders(sql: str) -> str:
    """`sql` with each `?` outside a quoted string as `%s`, and each `%` doubled (psycopg
    reads `%` as the start of a placeholder)."""
    out: list[str] = []
    quote: str | None = None
    for char in sql:
        if quote is not None:
            if char == quote:
                quote = None
        elif char in ("'", '"'):
            quote = char
        elif char == "?":
            out.append("%s")
            continue
        out.append("%%" if char == "%" else char)
    return "".join(out)


class PgConnection:
    """One server connection, as the storage modules use it (see storage/connection.py)."""

    def __init__(self, raw: psycopg.Connection[Any], where: str, dialect: PostgresDialect) -> None:
        self.raw = raw
        self.dialect = dialect  # the store's: it knows whose personal rows are whose
        self.full_text = TSVECTOR
        self.where = where  # the server's URL without a password, for messages
        self.broken = False

    def execute(self, sql: str, parameters: Any = (), /) -> "psycopg.Cursor[Any]":
        try:
            if parameters:
                return self.raw.execute(placeholders(sql), parameters)
            return self.raw.execute(sql)
        except psycopg.Error as exc:
            raise self._failure(exc) from exc

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> "psycopg.Cursor[Any]":
        cursor = self.raw.cursor()
        try:
            cursor.executemany(placeholders(sql), list(seq_of_parameters))
        except psycopg.Error as exc:
            raise self._failure(exc) from exc
        return cursor

    @property
    def in_transaction(self) -> bool:
        return self.raw.info.transaction_status != psycopg.pq.TransactionStatus.IDLE

    def _failure(self, exc: psycopg.Error) -> StoreError:
        if isinstance(exc, psycopg.OperationalError) and not isinstance(
            exc, pg_errors.QueryCanceled | pg_errors.LockNotAvailable
        ):
            self.broken = self.broken or self.raw.closed or self.raw.broken
        return StoreError(explain(self.where, exc))


def explain(where: str, exc: psycopg.Error) -> str:
    """One sentence saying what went wrong with the server at `where`."""
    detail = _first_line(exc)
    if isinstance(exc, pg_errors.ReadOnlySqlTransaction):
        return (
            f"The contextd server at {where} takes no writes here (a read replica, or a "
            "read-only opening): writes are off."
        )
    if isinstance(exc, pg_errors.InsufficientPrivilege):
        return (
            f"The contextd server at {where} refused this role a privilege ({detail}); "
            "ask its administrator for the grants docs/teams/postgresql.md lists."
        )
    if isinstance(exc, pg_errors.QueryCanceled | pg_errors.LockNotAvailable):
        return f"The contextd server at {where} stayed busy with another writer; try again."
    if isinstance(exc, psycopg.OperationalError):
        return (
            f"Cannot reach the contextd server at {where} ({detail}); check that it is up "
            "and that [store] url is right: writes are refused until it answers."
        )
    return f"The contextd server at {where} failed: {detail}."


def _first_line(exc: psycopg.Error) -> str:
    text = str(exc).strip().splitlines()
    return text[0].rstrip(".") if text else type(exc).__name__
