"""Whatever text a user types, contextd either takes it or refuses it with one clear error."""

import re
from pathlib import Path

import pytest
from click.testing import Result
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from contextd.app import App
from contextd.core.recall.queries import MAX_QUERY_CHARS
from contextd.core.writing.validation import MAX_FIELD_CHARS
from contextd.credentials.scan import find_secrets
from contextd.errors import (
    ContextdError,
    DuplicateError,
    InvalidInputError,
    InvalidQueryError,
    NotFoundError,
)
from contextd.models import Kind, MemoryBody, RecordDraft, SearchQuery
from tests.conftest import Cli
from tests.storage.helpers import assert_fts_consistent

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    database=None,  # nothing written beside the tests; every run explores afresh
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

_CHARS = st.characters(exclude_categories=("Cs",))  # lone surrogates cannot be UTF-8 encoded
_SYNTAX = [
    '"',
    "'",
    '""',
    "*",
    "NEAR(",
    "NEAR(a b, 2)",
    ")",
    "(",
    "-",
    "+",
    "^",
    ":",
    "title:",
    "{title body}",
    "OR",
    "AND",
    "NOT",
    " OR ",
    "\x00",
    "\n",
    "\r\n",
    "\t",
    " ",
    "\u200b",
    "\ufeff",
    "%",
    "_",
    "\\",
    "'; DROP TABLE records; --",
    "password=hunter2hunter2",
    "ghp_" + "a" * 36,
    "deploy",
    "the",
]


@st.composite
def _long_text(draw: st.DrawFn) -> str:
    """Text around the 20,000-character field limit, up to 30,000 characters."""
    piece = draw(st.text(_CHARS, min_size=1, max_size=40))
    length = draw(st.integers(19_990, 30_000))
    return (piece * (length // len(piece) + 1))[:length]


TEXT = st.one_of(
    st.text(_CHARS),
    st.lists(st.one_of(st.sampled_from(_SYNTAX), st.text(_CHARS, max_size=12)), max_size=30).map(
        "".join
    ),
    _long_text(),
)


def _seed(app: App) -> None:
    project = app.current_project()
    for title in [
        'The "deploy" script needs NEAR( care * and -flags OR quotes',
        "Run migrations before deploying the orbit service to staging",
        "Never store the signing key in the repository; it lives in the vault",
    ]:
        draft = RecordDraft(kind=Kind.MEMORY, title=title, body=MemoryBody(), category="note")
        app.writer.create(draft, project, force=True)


def _assert_one_error_line(result: Result, typed: str = "") -> None:
    """One line as a terminal or a log reader sees it: split at newlines only (not at the
    other separators str.splitlines knows, such as \x1e).

    When the typed text itself holds a newline only the start is checked here: messages echo
    what was typed, and the tests of multi-line input below pin that case down.
    """
    assert "Traceback" not in result.output, result.output
    assert result.stderr.startswith("Error: "), result.stderr
    if "\n" in typed or "\r" in typed:
        return
    lines = result.stderr.removesuffix("\n").replace("\r\n", "\n").split("\n")
    assert len(lines) == 1, f"exit {result.exit_code}, stderr {result.stderr!r}"
    assert lines[0].startswith("Error: "), result.stderr


@pytest.mark.slow
def test_any_text_as_a_memory_title_is_stored_or_refused_with_a_contextd_error(
    app: App,
) -> None:
    project = app.current_project()
    db_path = app.settings.db_path
    _seed(app)

    @SETTINGS
    @given(title=TEXT)
    def check(title: str) -> None:
        stripped = title.strip()
        storable = (
            "\x00" not in title
            and 10 <= len(stripped) <= MAX_FIELD_CHARS
            and not find_secrets(stripped)
        )
        draft = RecordDraft(kind=Kind.MEMORY, title=title, body=MemoryBody(), category="note")
        try:
            record = app.writer.create(draft, project)
        except DuplicateError:
            assert storable  # only a valid record gets as far as the duplicate check
        except ContextdError as exc:
            assert not storable, f"a storable title was refused: {exc}"
            assert str(exc).strip()
        else:
            assert storable
            assert record.title == stripped
            assert app.reader.get(record.id).title == stripped
        assert_fts_consistent(db_path)

    check()


def test_any_text_as_a_search_query_returns_hits_or_raises_a_contextd_error(app: App) -> None:
    project = app.current_project()
    _seed(app)

    @SETTINGS
    @given(text=TEXT)
    def check(text: str) -> None:
        # Refused: no words to search for, or more characters than a query may have.
        searchable = re.search(r"\w", text.replace("\x00", " ")) is not None
        searchable = searchable and len(text) <= MAX_QUERY_CHARS
        try:
            result = app.search.search(project, SearchQuery(text=text))
        except InvalidQueryError as exc:
            assert not searchable, f"refused: {str(exc)[:80]}"
        else:
            assert searchable
            assert len(result.hits) <= 10
            assert len({hit.record.id for hit in result.hits}) == len(result.hits)
        try:
            recall = app.search.recall(project, SearchQuery(text=text))
        except InvalidQueryError:
            assert not searchable
        else:
            assert searchable
            assert recall.tokens <= recall.budget

    check()


def test_any_odd_id_given_to_show_ends_in_exit_2_or_3_with_one_error_line(
    app: App, run: Cli
) -> None:
    _seed(app)
    real = app.reader.list_records(app.current_project())[0].id

    @SETTINGS
    @given(
        reference=st.one_of(
            TEXT,
            st.sampled_from(
                [real[:7], real + "x", real[:8] + "%", real[:8] + "_", "%" * 8, "_" * 8, real[::-1]]
            ),
        )
    )
    @example(reference="%%%%%%%%")
    def check(reference: str) -> None:
        result = run("show", "--", reference)
        assert result.exit_code in (2, 3), (result.exit_code, result.output)
        _assert_one_error_line(result, reference)
        with pytest.raises((InvalidInputError, NotFoundError)):
            app.reader.get(reference)

    check()


@pytest.mark.slow
def test_any_text_given_to_add_exits_0_2_or_4_and_never_crashes(
    app: App, run: Cli, home: Path
) -> None:
    _seed(app)

    @SETTINGS
    @given(text=TEXT)
    def check(text: str) -> None:
        result = run("add", "--category", "note", "--", text)
        assert result.exit_code in (0, 2, 4), (result.exit_code, result.output)
        assert "Traceback" not in result.output
        if result.exit_code == 0:
            assert result.stdout.startswith("Recorded memory"), result.stdout
        else:
            # Not checked for one line here: a duplicate refusal quotes the stored title,
            # which may hold a newline (pinned down by the test of multi-line titles below).
            assert result.stderr.startswith("Error: "), result.stderr
            assert result.stdout == ""

    check()
    assert_fts_consistent(home / "contextd.db")


def test_an_unknown_id_holding_a_newline_is_reported_on_one_error_line(app: App, run: Cli) -> None:
    _seed(app)

    for reference in ["no such record\nsecond line", "\n", "deadbeef\r\nrm -rf"]:
        result = run("show", "--", reference)
        assert result.exit_code in (2, 3), result.output
        _assert_one_error_line(result)


def test_refusing_a_duplicate_of_a_multi_line_title_still_prints_one_error_line(
    app: App, run: Cli
) -> None:
    title = "Deploys need two steps:\nfirst run the migrations, then restart the workers"
    first = run("add", "--category", "note", "--", title)
    assert first.exit_code == 0, first.output

    again = run("add", "--category", "note", "--", title)

    assert again.exit_code == 4, again.output
    _assert_one_error_line(again)
