"""A file at the store's path that is not a usable contextd store is refused and left as it was."""

import os
import random
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from contextd.errors import SchemaTooNewError, StoreError
from contextd.storage.sqlite.database import SqliteDatabase


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file in `folder` (e.g. the store and any -wal/-shm beside it) with its bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _refused(path: Path, error: type[StoreError] = StoreError) -> str:
    with pytest.raises(error) as caught:
        SqliteDatabase.open(path)
    assert type(caught.value) is error
    message = str(caught.value)
    assert str(path) in message
    return message


def test_a_text_file_at_the_store_path_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "contextd.db"
    path.write_text("my shopping list\n- eggs\n- milk\n", encoding="utf-8")
    before = _snapshot(tmp_path)

    message = _refused(path)

    assert "not an SQLite file" in message
    assert _snapshot(tmp_path) == before


def test_a_file_of_random_bytes_at_the_store_path_is_refused_and_left_untouched(
    tmp_path: Path,
) -> None:
    path = tmp_path / "contextd.db"
    path.write_bytes(random.Random(20240601).randbytes(8192))
    before = _snapshot(tmp_path)

    _refused(path)

    assert _snapshot(tmp_path) == before


def test_an_sqlite_file_another_program_created_is_refused_and_left_untouched(
    tmp_path: Path,
) -> None:
    path = tmp_path / "contextd.db"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE foo (bar TEXT)")
        conn.execute("INSERT INTO foo VALUES ('precious')")
        conn.commit()
        assert conn.execute("PRAGMA application_id").fetchone()[0] == 0
    before = _snapshot(tmp_path)

    message = _refused(path)

    assert "did not create" in message
    assert _snapshot(tmp_path) == before
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master")]
    assert tables == ["foo"]


def test_an_sqlite_file_with_a_foreign_application_id_is_refused_even_when_empty(
    tmp_path: Path,
) -> None:
    path = tmp_path / "contextd.db"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA application_id = 1234")
        conn.commit()
    before = _snapshot(tmp_path)

    _refused(path)

    assert _snapshot(tmp_path) == before


def test_a_store_written_by_a_newer_contextd_is_refused_and_left_untouched(
    tmp_path: Path,
) -> None:
    path = tmp_path / "contextd.db"
    SqliteDatabase.open(path).close()
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA user_version = 999")
        conn.commit()
    before = _snapshot(tmp_path)

    message = _refused(path, SchemaTooNewError)

    assert "999" in message
    assert _snapshot(tmp_path) == before
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 999


def test_a_folder_at_the_store_path_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "contextd.db"
    path.mkdir()
    (path / "keep.txt").write_text("still here", encoding="utf-8")

    message = _refused(path)

    assert "folder" in message
    assert path.is_dir()
    assert [p.name for p in path.iterdir()] == ["keep.txt"]
    assert (path / "keep.txt").read_text(encoding="utf-8") == "still here"


def test_a_store_in_a_read_only_home_is_refused_with_a_store_error(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("running as root: root ignores folder permission bits, so nothing is refused")
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o500)
    try:
        path = home / "contextd.db"
        _refused(path)
        assert list(home.iterdir()) == []
    finally:
        home.chmod(0o700)
