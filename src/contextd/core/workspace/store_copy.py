"""Moving a whole store: from the home's SQLite file to a team server, or from the server back
into an SQLite file; all or nothing, with the rows copied per table."""

from pathlib import Path

from msgspec import Struct

from contextd.errors import InvalidInputError, StoreError
from contextd.server_url import redact, url_problem
from contextd.storage.copy import copy_store
from contextd.storage.opening import open_file
from contextd.storage.server import open_url
from contextd.storage.store import Database

__all__ = ["CopyReport", "copy_to"]


class CopyReport(Struct, frozen=True):
    source: str
    target: str
    copied: dict[str, int]  # table -> rows


def copy_to(
    db: Database, target: str, *, connect_timeout_s: float, developer_name: str = ""
) -> CopyReport:
    """Copy the store `db` into `target`: a postgresql:// URL (its password in PGPASSWORD or
    ~/.pgpass) or the path of a new SQLite file. The target must hold no store yet. On a
    server target, the sessions and personal records become the login role's (with
    `developer_name`, [store] developer, after a slash).

    Raises:
        InvalidInputError: the target is not a usable URL, or is the store itself.
        ConflictError: the target already holds a store.
        StoreError: either store failed; the target was left without any of the rows.
    """
    if "://" in target:
        problem = url_problem(target)
        if problem:
            raise InvalidInputError(problem.replace("store.url", "--to"))
        if redact(target) == str(db.path):
            raise InvalidInputError("--to names the store being copied; name another one.")
        destination = open_url(
            target, connect_timeout_s=connect_timeout_s, developer_name=developer_name
        )
        return _copy(db, destination, redact(target), created=None)
    path = Path(target).expanduser().absolute()
    if str(path) == str(db.path):
        raise InvalidInputError("--to names the store being copied; name another file.")
    created = None if path.exists() else path
    try:
        destination = open_file(path)
    except StoreError:
        _remove(created)
        raise
    return _copy(db, destination, str(path), created=created)


def _copy(source: Database, destination: Database, label: str, created: Path | None) -> CopyReport:
    try:
        copied = copy_store(source, destination)
    except BaseException:
        destination.close()
        _remove(created)  # a new file that got none of the rows is not left behind
        raise
    destination.close()
    return CopyReport(str(source.path), label, copied)


def _remove(created: Path | None) -> None:
    if created is None:
        return
    for suffix in ("", "-wal", "-shm"):
        created.with_name(created.name + suffix).unlink(missing_ok=True)
