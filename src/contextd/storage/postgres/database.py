"""The team store on a PostgreSQL server: a connection pool, one writer at a time, and
read snapshots.

A statement outside a transaction borrows a pooled connection for itself; a transaction or a
snapshot pins one connection to its thread until it ends (and `connection()` then gives that
one, so reads inside a write see it). Write transactions take one advisory lock, so writers on
every machine queue as SQLite's BEGIN IMMEDIATE makes them queue: the duplicate, supersede
and one-open-session rules are checked and applied with no other writer in between.
"""

import math
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.types.string import StrDumper
from psycopg_pool import ConnectionPool, PoolTimeout

from contextd.errors import StoreError, UnknownOutcomeError
from contextd.server_url import redact
from contextd.storage.postgres import schema
from contextd.storage.postgres.connection import PgConnection, explain
from contextd.storage.postgres.dialect import PostgresDialect
from contextd.storage.postgres.fulltext import TSVECTOR, TsVector
from contextd.storage.store import Database

__all__ = ["WRITER_LOCK", "PostgresDatabase"]

WRITER_LOCK = 0x63747864_0002  # pg_advisory_xact_lock key held by every write transaction
_WARM = 4  # connections a warmed pool keeps open


class _Rows:
    """The rows of a statement whose connection went back to the pool (read in full)."""

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows = rows
        self.rowcount = rowcount

    def fetchone(self) -> Any:
        return self._rows.pop(0) if self._rows else None

    def fetchall(self) -> list[Any]:
        rows, self._rows = self._rows, []
        return rows

    def fetchmany(self, size: int = 1) -> list[Any]:
        rows, self._rows = self._rows[:size], self._rows[size:]
        return rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class _Borrowing:
    """The Connection the storage modules get outside a transaction: each statement runs on a
    pooled connection borrowed for it alone (once more on a fresh one if the first was lost)."""

    def __init__(self, database: "PostgresDatabase") -> None:
        self._database = database

    @property
    def dialect(self) -> PostgresDialect:
        return self._database.dialect

    @property
    def full_text(self) -> TsVector:
        return TSVECTOR

    def execute(self, sql: str, parameters: Any = (), /) -> _Rows:
        return self._run(lambda conn: conn.execute(sql, parameters))

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> _Rows:
        batch = list(seq_of_parameters)
        return self._run(lambda conn: conn.executemany(sql, batch))

    def _run(self, statement: Any) -> _Rows:
        for attempt in (1, 2):
            conn = self._database.borrow()
            try:
                cursor = statement(conn)
                rows = cursor.fetchall() if cursor.description is not None else []
                return _Rows(rows, cursor.rowcount)
            except StoreError:
                if not conn.broken or attempt == 2:
                    raise
            finally:
                self._database.give_back(conn)
        raise AssertionError("unreachable")


class PostgresDatabase(Database):
    """A contextd store on a PostgreSQL server with pgvector, shared across threads."""

    backend: ClassVar[str] = "postgresql"

    def __init__(
        self,
        url: str,
        *,
        read_only: bool,
        connect_timeout_s: float,
        pool_size: int,
        developer_name: str = "",
        statement_timeout_s: float | None = None,
    ) -> None:
        self.path: str = redact(url)
        self._url = url
        self._read_only = read_only
        self._name = developer_name
        self._dialect = PostgresDialect()  # whose rows are whose, once the server said
        self._timeout = connect_timeout_s
        settings: dict[str, Any] = {
            "autocommit": True,
            "connect_timeout": _seconds(connect_timeout_s),
            "application_name": "contextd",
        }
        # Added to the URL's own options (a search_path, say), not over them.
        options = [str(conninfo_to_dict(url).get("options") or "")]
        if read_only:
            options.append("-c default_transaction_read_only=on")
        if statement_timeout_s is not None:  # a server that stalls fails a statement in time
            wait = max(1, round(statement_timeout_s * 1000))
            options.append(f"-c statement_timeout={wait} -c lock_timeout={wait}")
        if joined := " ".join(options).strip():
            settings["options"] = joined
        self._settings = settings
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max(pool_size, 2),
            kwargs=settings,
            configure=_configure,
            timeout=connect_timeout_s,
            open=False,
            name="contextd",
        )
        self._local = threading.local()
        self._borrowing = _Borrowing(self)
        self._lock = threading.Lock()
        self._commits = 0

    @classmethod
    def open_url(
        cls,
        url: str,
        *,
        read_only: bool = False,
        connect_timeout_s: float = 5.0,
        pool_size: int = 8,
        developer_name: str = "",
        statement_timeout_s: float | None = None,
    ) -> "PostgresDatabase":
        """Connect to the server at `url` and migrate its schema (check it, `read_only`).
        `developer_name` tells apart the people who share one login role. Connecting gives
        up after `connect_timeout_s` (fractions too); with `statement_timeout_s`, so does a
        statement, or a wait for a lock (a hook's budget).

        Raises:
            StoreError: the server cannot be reached, refuses this role, or holds tables that
                are not contextd's.
            SchemaTooNewError: a newer contextd migrated the server.
        """
        database = cls(
            url,
            read_only=read_only,
            connect_timeout_s=connect_timeout_s,
            pool_size=pool_size,
            developer_name=developer_name,
            statement_timeout_s=statement_timeout_s,
        )
        try:
            database._open()
        except BaseException:
            database.close()
            raise
        return database

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def dialect(self) -> PostgresDialect:
        return self._dialect

    @property
    def developer(self) -> str:
        """Who this store's user is: the login role the server authenticated (`current_user`),
        and after a slash the `[store] developer` name when one splits a role shared by
        several people."""
        return self._dialect.developer

    def connection(self) -> PgConnection | _Borrowing:
        """The connection pinned by this thread's open transaction or snapshot, else one that
        borrows a pooled connection per statement."""
        pinned: PgConnection | None = getattr(self._local, "pinned", None)
        return pinned if pinned is not None else self._borrowing

    @contextmanager
    def transaction(self) -> Iterator[PgConnection]:
        """A write transaction holding the writers' lock (a savepoint when one is open)."""
        pinned: PgConnection | None = getattr(self._local, "pinned", None)
        if pinned is not None:
            with self._failures(pinned), pinned.raw.transaction():
                yield pinned
            return
        conn = self.borrow()
        self._local.pinned = conn
        committing = False
        try:
            with conn.raw.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(?)", (WRITER_LOCK,))
                yield conn
                committing = True  # what fails from here on is the COMMIT
            with self._lock:
                self._commits += 1
        except psycopg.Error as exc:
            if committing and conn.raw.broken:  # sent, and no answer: the server may have it
                raise UnknownOutcomeError(
                    f"The connection to the contextd server at {self.path} broke as a write "
                    "was being committed: it may or may not have been stored; look before "
                    "doing it again."
                ) from exc
            raise StoreError(explain(self.path, exc)) from exc
        finally:
            self._local.pinned = None
            self.give_back(conn)

    @contextmanager
    def snapshot(self) -> Iterator[PgConnection]:
        """Several reads of one committed state (REPEATABLE READ, READ ONLY)."""
        pinned: PgConnection | None = getattr(self._local, "pinned", None)
        if pinned is not None:
            yield pinned
            return
        conn = self.borrow()
        self._local.pinned = conn
        try:
            with self._failures(conn), conn.raw.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                yield conn
        finally:
            self._local.pinned = None
            self.give_back(conn)

    def change_token(self) -> tuple[int, int]:
        """The server's transaction snapshot (it moves whenever any transaction that wrote
        begins or ends, on any machine) and this process's commit count."""
        row = self.connection().execute("SELECT CAST(pg_current_snapshot() AS text)").fetchone()
        return zlib.crc32(str(row and row[0]).encode("ascii")), self._commits

    def close(self) -> None:
        self._pool.close()

    def warm(self) -> None:
        """Keep a few connections open for a long-lived process (the daemon), and touch the
        tables the query path reads."""
        self._pool.resize(min(_WARM, self._pool.max_size), self._pool.max_size)
        self._pool.wait(timeout=self._timeout)
        self.connection().execute("SELECT count(*) FROM (SELECT 1 FROM records LIMIT 1) AS one")

    def borrow(self) -> PgConnection:
        """A pooled connection for this caller alone, until `give_back`."""
        try:
            raw = self._pool.getconn(timeout=self._timeout)
        except PoolTimeout:
            raise StoreError(self._unreachable()) from None
        return PgConnection(raw, self.path, self._dialect)

    def give_back(self, conn: PgConnection) -> None:
        self._pool.putconn(conn.raw)

    def _open(self) -> None:
        """One direct connection first: it fails fast, in the server's own words, when the
        server cannot be used, and migrates the schema; then the pool fills in the background."""
        try:
            with _connect(self._url, self._timeout, self.path, self._settings) as probe:
                _configure(probe)
                schema.prepare(probe, self.path, read_only=self._read_only)
                role = str(probe.execute("SELECT current_user").fetchone()[0])  # type: ignore[index]
        except psycopg.Error as exc:
            raise StoreError(explain(self.path, exc)) from exc
        self._dialect = PostgresDialect(f"{role}/{self._name}" if self._name else role)
        self._pool.open(wait=False)

    def _unreachable(self) -> str:
        return (
            f"No connection to the contextd server at {self.path} came free in "
            f"{self._timeout:g} s (it went away, or every pooled one is busy); try again."
        )

    @contextmanager
    def _failures(self, conn: PgConnection) -> Iterator[None]:
        """psycopg's own failures (a commit, a savepoint) as StoreError."""
        try:
            yield
        except psycopg.Error as exc:
            raise StoreError(explain(self.path, exc)) from exc


def _seconds(timeout: float) -> int:
    """libpq's connect_timeout: whole seconds (it treats 1 as 2)."""
    return max(1, round(timeout))


def _connect(
    url: str, seconds: float, where: str, settings: dict[str, Any]
) -> psycopg.Connection[Any]:
    """psycopg.connect, given up after `seconds`: libpq counts its connect_timeout in whole
    seconds and waits 2 at the least, more than a hook may spend on a server that accepts the
    connection and never answers. The attempt goes on in a daemon thread until libpq's own
    timeout and closes what it gets late; a process that exits meanwhile does not wait for it.

    Raises:
        StoreError: no answer came in time.
        psycopg.Error: the server answered with a refusal (wrong password, no database).
    """
    outcome: dict[str, Any] = {}
    arrived = threading.Event()
    lock = threading.Lock()

    def attempt() -> None:
        try:  # libpq's own limit comes after ours, so a silent server is ours to report
            conn = psycopg.connect(url, **{**settings, "connect_timeout": math.ceil(seconds) + 1})
        except BaseException as exc:  # handed over to the caller below
            outcome["error"] = exc
        else:
            with lock:
                if outcome.get("abandoned"):
                    conn.close()
                    return
                outcome["conn"] = conn
        arrived.set()

    threading.Thread(target=attempt, name="contextd-connect", daemon=True).start()
    arrived.wait(seconds)
    with lock:
        if "conn" not in outcome and "error" not in outcome:
            outcome["abandoned"] = True
            raise StoreError(
                f"Cannot reach the contextd server at {where} (it did not answer within "
                f"{seconds:g} s); check that it is up and that [store] url is right: writes "
                "are refused until it answers."
            )
    if "error" in outcome:
        raise outcome["error"]
    conn: psycopg.Connection[Any] = outcome["conn"]
    return conn


def _configure(conn: psycopg.Connection[Any]) -> None:
    """Every pooled connection: Python text is sent as `text` (the storage SQL casts where
    it means another type)."""
    conn.adapters.register_dumper(str, StrDumper)
