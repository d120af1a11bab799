"""The committed fixtures, and reading back what an import stored."""

import shutil
from pathlib import Path

import pytest

from contextd.app import App
from contextd.models import Record

FIXTURES = Path(__file__).parent / "fixtures"
CK_07 = FIXTURES / "context-keeper-0.7.1"
CK_019 = FIXTURES / "context-keeper-0.19.0"
KEPT = FIXTURES / "kept"
ADRS = FIXTURES / "adr"
ORBIT = KEPT / "acme" / "orbit"


def stored(app: App) -> dict[str, Record]:
    """Every record of the current project, whatever its status, by its first title line."""
    records = app.reader.list_records(app.current_project(), include_inactive=True)
    return {r.title.split("\n", 1)[0]: r for r in records}


@pytest.fixture
def ck_copy(tmp_path: Path) -> Path:
    """A writable copy of the 0.7.1 store, for tests that change it."""
    target = tmp_path / "ck-project"
    shutil.copytree(CK_07, target)
    return target


@pytest.fixture
def kept_copy(tmp_path: Path) -> Path:
    """A writable copy of the Kept project folder acme/orbit."""
    target = tmp_path / "kept" / "acme" / "orbit"
    shutil.copytree(ORBIT, target)
    return target


@pytest.fixture
def adr_copy(tmp_path: Path) -> Path:
    """A writable copy of the ADR folder, for tests that change it."""
    target = tmp_path / "adr"
    shutil.copytree(ADRS, target)
    return target
