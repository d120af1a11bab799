"""The embedded store, an SQLite file: opening it safely, one connection per thread (closed
when its thread ends), and transactions."""

import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from contextd.errors import SchemaTooNewError, StoreError
from contextd.home_folder import open_private
from contextd.storage.migrations import apply_pending, known_migrations
from contextd.storage.sqlite.dialect import SQLITE, SqliteDialect
from contextd.storage.sqlite.fulltext import FTS5, Fts5
from contextd.storage.store import BUSY_TIMEOUT_MS, Database

__all__ = [
    "APPLICATION_ID",
    "SqliteConnection",
    "SqliteDatabase",
    "store_writable",
    "translate_errors",
]

APPLICATION_ID = 0x63747864  # "ctxd": marks a file as a contextd store
_SQLITE_MAGIC = b"SQLite format 3\x00"


class SqliteDatabase(Database):
    """A contextd SQLite store, shared across threads: each thread gets its own connection."""

    backend: ClassVar[str] = "sqlite"

    def __init__(
        self, path: Path, busy_timeout_ms: int = BUSY_TIMEOUT_MS, uri: str | None = None
    ) -> None:
        self.path: Path = path
        self.busy_timeout_ms = busy_timeout_ms
        self._uri = uri  # set for a read-only store: connections open it by this URI
        self._local = threading.local()
        self._connections: weakref.WeakSet[_Owned] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._commits = 0

    @classmethod
    def open(cls, path: Path, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> "SqliteDatabase":
        """Open (creating if absent) and migrate the store at `path`; a writer waits up to
        `busy_timeout_ms` for another one to finish.

        Raises:
            StoreError: the file is not a contextd store, or cannot be opened or written.
            SchemaTooNewError: the file was written by a newer contextd.
        """
        _refuse_foreign_file(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"Cannot create the folder {path.parent}: {exc.strerror}.") from exc
        _create_private(path)
        database = cls(path, busy_timeout_ms)
        try:
            database._prepare()
        except BaseException:
            database.close()
            raise
        return database

    @classmethod
    def open_read_only(cls, path: Path) -> "SqliteDatabase":
        """Open an existing store without writing anything: no WAL switch, no migration, no
        file created beside it; every write statement fails. For a home that cannot be written.

        Raises:
            StoreError: there is no store at `path`, it is not a contextd store, or it needs a
                migration (which needs write access).
            SchemaTooNewError: the file was written by a newer contextd.
        """
        _refuse_foreign_file(path)
        if not path.is_file():
            raise StoreError(f"There is no contextd store at {path}; check --home.")
        # Without a -wal file there is nothing but the main file to read, and a read-only
        # folder could not hold the -shm file SQLite wants: read it as immutable (no lock, no
        # side file). With one, a writer may be active, so read through its WAL.
        wal = path.with_name(path.name + "-wal")
        mode = "mode=ro" if wal.exists() else "mode=ro&immutable=1"
        database = cls(path, uri=f"{path.absolute().as_uri()}?{mode}")
        try:
            conn = database.connection()
            with translate_errors(path):
                conn.execute("PRAGMA query_only = ON")
                _check_identity(conn, path)
            latest = known_migrations()[-1].version
            _refuse_newer_schema(conn, path, latest)
            if conn.execute("PRAGMA user_version").fetchone()[0] != latest:
                raise StoreError(
                    f"{path} was written by an older contextd and must be upgraded first; run "
                    "any contextd command once where the store can be written."
                )
        except BaseException:
            database.close()
            raise
        return database

    @property
    def read_only(self) -> bool:
        return self._uri is not None

    @property
    def dialect(self) -> SqliteDialect:
        return SQLITE

    @contextmanager
    def snapshot(self) -> Iterator["SqliteConnection"]:
        """A read transaction: several reads see one state of the store, and nothing is written
        (works on a read-only store, where `transaction` cannot start)."""
        conn = self.connection()
        if conn.in_transaction:
            yield conn
            return
        with translate_errors(self.path):
            conn.execute("BEGIN")
        try:
            yield conn
        finally:
            if conn.in_transaction:
                conn.rollback()

    def connection(self) -> "SqliteConnection":
        """This thread's connection, opened on first use."""
        owned: _Owned | None = getattr(self._local, "owned", None)
        if owned is None:
            owned = self._local.owned = _Owned(self._connect())
            with self._lock:
                self._connections.add(owned)
        return owned.conn

    @contextmanager
    def transaction(self) -> Iterator["SqliteConnection"]:
        """A write transaction (BEGIN IMMEDIATE), or a savepoint when one is already open."""
        conn = self.connection()
        if conn.in_transaction:
            name = f"sp_{id(conn)}_{threading.get_ident()}"
            conn.execute(f"SAVEPOINT {name}")
            try:
                yield conn
            except BaseException:
                conn.execute(f"ROLLBACK TO {name}")
                conn.execute(f"RELEASE {name}")
                raise
            conn.execute(f"RELEASE {name}")
            return
        with translate_errors(self.path):
            conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.rollback()
            raise
        with translate_errors(self.path):
            conn.commit()
        with self._lock:
            self._commits += 1

    def change_token(self) -> tuple[int, int]:
        """Differs whenever anything was committed since it was last read, by this process
        (commit count) or another one (SQLite's data_version); costs no table read."""
        version = self.connection().execute("PRAGMA data_version").fetchone()[0]
        return int(version), self._commits

    def close(self) -> None:
        """Close every connection this store opened."""
        with self._lock:
            connections, self._connections = list(self._connections), weakref.WeakSet()
        for owned in connections:
            owned.conn.close()
        self._local = threading.local()

    def _connect(self) -> "SqliteConnection":
        with translate_errors(self.path):
            conn = sqlite3.connect(
                self._uri or self.path,
                uri=self._uri is not None,
                timeout=self.busy_timeout_ms / 1000,
                isolation_level=None,
                check_same_thread=False,
                factory=SqliteConnection,
            )
            conn.store_path = self.path
            conn.execute(f"PRAGMA busy_timeout = {self.busy_timeout_ms}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA synchronous = FULL")
        return conn

    def _prepare(self) -> None:
        conn = self.connection()
        with translate_errors(self.path):
            conn.execute("BEGIN")  # one snapshot for both reads of the identity check
            try:
                _check_identity(conn, self.path)
            finally:
                conn.rollback()
            _use_wal(conn, self.busy_timeout_ms)
            latest = known_migrations()[-1].version
            if conn.execute("PRAGMA user_version").fetchone()[0] == latest:
                return
            with self.transaction():
                _check_identity(conn, self.path)  # another process may have set it up meanwhile
                _refuse_newer_schema(conn, self.path, latest)
                if apply_pending(conn):
                    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")


def _create_private(path: Path) -> None:
    """Create the database file empty with mode 0600, when missing: SQLite then fills it, and
    gives its -wal and -shm files the same mode."""
    try:
        os.close(open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        pass
    except OSError:
        pass  # SQLite's own open says what is wrong (a read-only folder, say)


def store_writable(path: Path) -> bool:
    """Whether the store at `path` (or its folder, when it does not exist yet) can be written:
    SQLite also creates files beside it. False on a read-only mount, even for root."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not os.access(folder, os.W_OK):
        return False
    return not path.exists() or os.access(path, os.W_OK)


def _refuse_foreign_file(path: Path) -> None:
    try:
        with path.open("rb") as handle:
            head = handle.read(len(_SQLITE_MAGIC))
    except FileNotFoundError:
        return
    except IsADirectoryError as exc:
        raise StoreError(f"{path} is a folder, not a contextd database; move it aside.") from exc
    except OSError as exc:
        raise StoreError(f"Cannot read {path}: {exc.strerror}.") from exc
    if head and head != _SQLITE_MAGIC:
        raise StoreError(
            f"{path} is not a contextd database (not an SQLite file); it was left untouched: "
            "move it aside or point --home elsewhere."
        )


class _Cursor(sqlite3.Cursor):
    """A cursor whose failures (a damaged page, a full disk) arrive as StoreError."""

    def _path(self) -> Path:
        connection = self.connection
        return connection.store_path if isinstance(connection, SqliteConnection) else Path("?")

    def execute(self, sql: str, parameters: Any = (), /) -> "_Cursor":
        with translate_errors(self._path()):
            super().execute(sql, parameters)
        return self

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> "_Cursor":
        with translate_errors(self._path()):
            super().executemany(sql, seq_of_parameters)
        return self

    def fetchone(self) -> Any:
        with translate_errors(self._path()):
            return super().fetchone()

    def fetchall(self) -> list[Any]:
        with translate_errors(self._path()):
            return super().fetchall()

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        with translate_errors(self._path()):
            return super().fetchmany(size)

    def __next__(self) -> Any:
        # Called once per row: a plain try costs nothing, a context manager per row did.
        try:
            return super().__next__()
        except sqlite3.DatabaseError as exc:
            translated = _translated(self._path(), exc)
            if translated is None:
                raise
            raise translated from exc


class SqliteConnection(sqlite3.Connection):
    """Every statement runs through a translating cursor, so no raw sqlite3 error escapes."""

    store_path: Path = Path("?")
    dialect: SqliteDialect = SQLITE
    full_text: Fts5 = FTS5

    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        return self.cursor(_Cursor).execute(sql, parameters)

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> _Cursor:
        return self.cursor(_Cursor).executemany(sql, seq_of_parameters)


class _Owned:
    """A thread's connection, closed when that thread ends and its thread-local goes: the
    daemon runs each hosted MCP session's tool calls on threads of their own, and each kept
    a connection (and ~2 MiB) for as long as the daemon ran."""

    def __init__(self, conn: SqliteConnection) -> None:
        self.conn = conn

    def __del__(self) -> None:
        self.conn.close()


def _use_wal(conn: sqlite3.Connection, busy_timeout_ms: int) -> None:
    """Switch to WAL; SQLite does not apply the busy timeout to this, so wait here."""
    deadline = time.monotonic() + busy_timeout_ms / 1000
    while conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        except StoreError as exc:
            locked = "locked" in str(exc.__cause__).lower()
            if not locked or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _check_identity(conn: sqlite3.Connection, path: Path) -> None:
    application_id = conn.execute("PRAGMA application_id").fetchone()[0]
    if application_id == APPLICATION_ID:
        return
    has_tables = conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
    ).fetchone()[0]
    if application_id != 0 or has_tables:
        raise StoreError(
            f"{path} is an SQLite file that contextd did not create; it was left untouched: "
            "move it aside or point --home elsewhere."
        )


def _refuse_newer_schema(conn: sqlite3.Connection, path: Path, latest: int) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > latest:
        raise SchemaTooNewError(
            f"{path} was written by a newer contextd (schema {version}, this one knows {latest}); "
            "upgrade contextd to use it."
        )


@contextmanager
def translate_errors(path: Path | str) -> Iterator[None]:
    """Turn SQLite's low-level failures into one clear StoreError sentence."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        translated = _translated(path, exc)
        if translated is None:
            raise
        raise translated from exc


def _translated(path: Path | str, exc: sqlite3.DatabaseError) -> StoreError | None:
    """The StoreError an SQLite failure becomes, or None for those callers handle."""
    if isinstance(exc, sqlite3.OperationalError):
        return StoreError(_explain(path, exc))
    if isinstance(exc, sqlite3.IntegrityError | sqlite3.ProgrammingError):
        return None
    return StoreError(
        f"{path} is damaged or not a database ({exc}); it was left untouched: "
        "restore a backup or move it aside."
    )


def _explain(where: Path | str, exc: sqlite3.OperationalError) -> str:
    path = Path(where)
    message = str(exc).lower()
    if "locked" in message or "busy" in message:
        return f"{path} stayed locked by another contextd process; try again in a moment."
    if "readonly" in message or "read-only" in message:
        return f"{path} is read-only; check the permissions of {path.parent}."
    if "disk is full" in message or "disk i/o" in message:
        return f"Writing {path} failed ({exc}); free some disk space and try again."
    if "unable to open" in message:
        return f"Cannot open {path}; check that {path.parent} exists and is writable."
    return f"The database {path} failed: {exc}."
