"""A file-path scope: records whose constraint scope covers a file, or whose text names it,
come first in search and recall."""

from pathlib import Path

import pytest

from contextd.app import App
from contextd.errors import InvalidInputError
from contextd.models import (
    ConstraintBody,
    Hardness,
    Kind,
    MemoryBody,
    Record,
    RecordDraft,
    SearchQuery,
)
from tests.conftest import Cli


def _memory(app: App, title: str) -> Record:
    draft = RecordDraft(kind=Kind.MEMORY, title=title, body=MemoryBody(), category="note")
    return app.writer.create(draft, app.current_project(), force=True)


def _constraint(app: App, title: str, scope: tuple[str, ...]) -> Record:
    body = ConstraintBody(
        reason="Invoices are legal documents and a changed total must be traceable",
        hardness=Hardness.STRONG,
        scope=scope,
    )
    draft = RecordDraft(kind=Kind.CONSTRAINT, title=title, body=body)
    return app.writer.create(draft, app.current_project(), force=True)


@pytest.fixture
def stored(app: App) -> dict[str, Record]:
    return {
        "loud": _memory(app, "The billing rounding rule: totals are rounded half up in billing"),
        "louder": _memory(app, "Billing rounding happens once, on the invoice total, in billing"),
        "scoped": _constraint(app, "Never change a stored invoice total", ("src/billing/**",)),
        "named": _memory(app, "src/billing/invoice.py holds the only rounding call"),
        "by_name": _memory(app, "Keep invoice.py free of I/O"),
        "elsewhere": _constraint(app, "Do not log tokens", ("src/auth/**",)),
    }


def _ids(app: App, text: str, path: str | None) -> list[str]:
    query = SearchQuery(text=text, limit=20, path=path)
    return [h.record.id for h in app.search.search(app.current_project(), query).hits]


def test_records_about_the_file_come_first_even_when_others_match_the_words_better(
    app: App, stored: dict[str, Record]
) -> None:
    ranked = _ids(app, "billing rounding", "src/billing/invoice.py")
    about = {stored[k].id for k in ("scoped", "named", "by_name")}
    assert set(ranked[:3]) == about
    assert stored["elsewhere"].id not in ranked[:3]
    assert stored["loud"].id in ranked[3:]


def test_without_a_path_the_order_is_the_usual_one(app: App, stored: dict[str, Record]) -> None:
    ranked = _ids(app, "billing rounding", None)
    assert ranked[0] in {stored["loud"].id, stored["louder"].id}


def test_an_absolute_path_inside_the_project_counts_as_its_project_path(
    app: App, stored: dict[str, Record], repo: Path
) -> None:
    absolute = str(repo / "src" / "billing" / "invoice.py")
    assert _ids(app, "billing rounding", absolute) == _ids(
        app, "billing rounding", "src/billing/invoice.py"
    )


def test_an_absolute_path_outside_the_project_is_one_clear_error(
    app: App, stored: dict[str, Record], tmp_path: Path
) -> None:
    with pytest.raises(InvalidInputError, match="not inside a folder of project"):
        _ids(app, "billing rounding", str(tmp_path / "elsewhere" / "x.py"))


def test_recall_with_path_from_the_cli_puts_the_files_records_first(
    app: App, stored: dict[str, Record], run: Cli, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "src" / "billing").mkdir(parents=True)
    monkeypatch.chdir(repo / "src")
    result = run.json("recall", "billing rounding", "--path", "billing/invoice.py")
    first = [hit["id"] for hit in result["results"][:3]]
    assert set(first) == {stored[k].id for k in ("scoped", "named", "by_name")}
