"""What runs a statement, on either backend: portable SQL with `?` placeholders, rows back."""

from collections.abc import Iterator
from typing import Any, Protocol

__all__ = ["Cursor", "Executor"]


class Cursor(Protocol):
    """The rows of one statement (a DB-API cursor)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def fetchmany(self, size: int = 1) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Executor(Protocol):
    """Runs statements; failures arrive as StoreError (or an integrity error a caller
    handles)."""

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor: ...

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> Cursor: ...
