"""The FTS index follows every change to records, and user text can never break a MATCH."""

import sqlite3
from contextlib import closing

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextd.app import App
from contextd.errors import InvalidQueryError
from contextd.models import (
    DecisionBody,
    Kind,
    MemoryBody,
    Project,
    Record,
    RecordDraft,
    RecordEdit,
    Status,
)
from contextd.storage.filters import RecordFilter
from contextd.storage.fts import fts_candidates, lexical_matches
from contextd.storage.fulltext import MAX_TERMS
from contextd.storage.sqlite.fulltext import match_expression
from tests.storage.helpers import assert_fts_consistent, fts_rowids, seq_of


def _memory(app: App, project: Project | None, title: str, *, is_global: bool = False) -> Record:
    draft = RecordDraft(
        kind=Kind.MEMORY, title=title, body=MemoryBody(), category="note", is_global=is_global
    )
    return app.writer.create(draft, project)


def _decision(app: App, project: Project, title: str, problem: str) -> Record:
    body = DecisionBody(
        problem=problem,
        why_chosen="It keeps durable consumers with acks and replay, so restarts lose nothing",
    )
    return app.writer.create(RecordDraft(kind=Kind.DECISION, title=title, body=body), project)


def _candidate_ids(app: App, project: Project, text: str) -> list[str]:
    scope = RecordFilter(project.id, statuses=())
    hits = fts_candidates(app.db.connection(), text, scope, limit=50)
    return [record_id for record_id, _ in hits]


# --- the index follows the records table ----------------------------------------------------


def test_a_created_record_is_indexed_under_its_title_words(app: App) -> None:
    project = app.current_project()
    record = _memory(app, project, "Deploys go through the zebra gateway")

    assert_fts_consistent(app.settings.db_path)
    assert fts_rowids(app.settings.db_path, "zebra") == [seq_of(app.settings.db_path, record.id)]


def test_after_a_title_update_the_old_word_finds_nothing_and_the_new_word_finds_the_record(
    app: App,
) -> None:
    project = app.current_project()
    record = _memory(app, project, "Deploys go through the zebra gateway")
    seq = seq_of(app.settings.db_path, record.id)

    app.writer.update(record.id, RecordEdit(title="Deploys go through the quokka gateway"))

    assert_fts_consistent(app.settings.db_path)
    assert fts_rowids(app.settings.db_path, "zebra") == []
    assert fts_rowids(app.settings.db_path, "quokka") == [seq]
    assert fts_rowids(app.settings.db_path, "gateway") == [seq]


def test_after_a_body_update_the_old_body_word_finds_nothing_and_the_new_one_does(
    app: App,
) -> None:
    project = app.current_project()
    record = _decision(
        app,
        project,
        "Use NATS for the task queue",
        "Redis pub/sub dropped tasks whenever the narwhal workers reconnected",
    )
    seq = seq_of(app.settings.db_path, record.id)
    assert fts_rowids(app.settings.db_path, "narwhal") == [seq]

    app.writer.update(
        record.id,
        RecordEdit(
            body={"problem": "Redis pub/sub dropped tasks whenever axolotl workers restarted"}
        ),
    )

    assert_fts_consistent(app.settings.db_path)
    assert fts_rowids(app.settings.db_path, "narwhal") == []
    assert fts_rowids(app.settings.db_path, "axolotl") == [seq]


def test_after_a_category_change_the_index_holds_the_new_category_only(app: App) -> None:
    project = app.current_project()
    record = _memory(app, project, "Deploys go through the main gateway")
    seq = seq_of(app.settings.db_path, record.id)

    app.writer.update(record.id, RecordEdit(category="gotcha", tags=("platypus",)))

    assert_fts_consistent(app.settings.db_path)
    assert fts_rowids(app.settings.db_path, "note") == []
    assert fts_rowids(app.settings.db_path, "gotcha") == [seq]
    assert fts_rowids(app.settings.db_path, "platypus") == [seq]


def test_superseding_keeps_both_records_indexed_and_the_index_consistent(app: App) -> None:
    project = app.current_project()
    old = _memory(app, project, "Builds run on the walrus runner pool")
    new = _memory(app, project, "Builds run on the pelican runner pool")

    retired, _ = app.writer.supersede(old.id, new.id)

    assert retired.status is Status.SUPERSEDED
    assert_fts_consistent(app.settings.db_path)
    assert fts_rowids(app.settings.db_path, "walrus") == [seq_of(app.settings.db_path, old.id)]
    assert fts_rowids(app.settings.db_path, "pelican") == [seq_of(app.settings.db_path, new.id)]
    assert len(fts_rowids(app.settings.db_path, "runner")) == 2


def test_archiving_and_unarchiving_keep_the_index_consistent(app: App) -> None:
    project = app.current_project()
    record = _memory(app, project, "Releases are tagged by the ocelot script")
    seq = seq_of(app.settings.db_path, record.id)

    app.writer.archive(record.id)
    assert_fts_consistent(app.settings.db_path)
    assert fts_rowids(app.settings.db_path, "ocelot") == [seq]

    app.writer.unarchive(record.id)
    assert_fts_consistent(app.settings.db_path)
    assert fts_rowids(app.settings.db_path, "ocelot") == [seq]


def test_a_deleted_record_is_gone_from_the_index(app: App) -> None:
    project = app.current_project()
    record = _memory(app, project, "Caches are warmed by the lemming job")
    keeper = _memory(app, project, "Caches are flushed by the badger job")
    linked = app.writer.create(
        RecordDraft(
            kind=Kind.MEMORY,
            title="The heron job depends on warm caches",
            body=MemoryBody(),
            category="note",
            related_to=(record.id,),
        ),
        project,
    )

    app.writer.delete(record.id)

    assert_fts_consistent(app.settings.db_path)
    assert fts_rowids(app.settings.db_path, "lemming") == []
    assert fts_rowids(app.settings.db_path, "badger") == [seq_of(app.settings.db_path, keeper.id)]
    assert fts_rowids(app.settings.db_path, "heron") == [seq_of(app.settings.db_path, linked.id)]
    assert app.reader.get(linked.id).related_to == ()
    assert _candidate_ids(app, project, "lemming") == []


def test_purging_a_project_removes_its_records_from_the_index_and_keeps_global_ones(
    app: App,
) -> None:
    project = app.current_project()
    for n in range(5):
        _memory(app, project, f"Project fact number {n} about the meerkat service")
    kept = _memory(app, None, "Global fact about the meerkat service", is_global=True)

    outcome = app.projects.detach(project, None, purge=True)

    assert outcome.purged_records == 5
    assert_fts_consistent(app.settings.db_path)
    assert fts_rowids(app.settings.db_path, "project") == []
    assert fts_rowids(app.settings.db_path, "meerkat") == [seq_of(app.settings.db_path, kept.id)]
    with closing(sqlite3.connect(app.settings.db_path)) as conn:
        remaining = conn.execute(
            "SELECT count(*) FROM records WHERE project_id = ?", (project.id,)
        ).fetchone()[0]
    assert remaining == 0


# --- user text is made safe to MATCH -------------------------------------------------------

FTS_SYNTAX = [
    '"',
    '"zebra',
    'zebra"',
    "zebra*",
    "*",
    "NEAR(zebra gateway)",
    "NEAR(",
    "-zebra",
    "zebra - gateway",
    "zebra OR",
    "OR zebra",
    "zebra AND NOT gateway",
    "AND NOT",
    "(zebra",
    "zebra)",
    "title:zebra",
    ":",
    "^zebra",
    "^",
    "{title body_text}: zebra",
    "zebra + gateway",
    "zebra\x00gateway",
]


@pytest.mark.parametrize("text", FTS_SYNTAX)
def test_user_text_with_fts_syntax_never_raises_an_sqlite_error(app: App, text: str) -> None:
    project = app.current_project()
    _memory(app, project, "Deploys go through the zebra gateway")

    try:
        found = _candidate_ids(app, project, text)
    except InvalidQueryError:
        assert not any(ch.isalnum() or ch == "_" for ch in text)
        return
    assert isinstance(found, list)


@pytest.mark.parametrize("text", ['"zebra', "zebra*", "NEAR(zebra", "-zebra", "title:zebra"])
def test_fts_syntax_around_a_word_still_finds_the_record_with_that_word(
    app: App, text: str
) -> None:
    project = app.current_project()
    record = _memory(app, project, "Deploys go through the zebra gateway")
    _memory(app, project, "Builds run on the pelican runner pool")

    assert _candidate_ids(app, project, text) == [record.id]


def test_a_query_of_only_stop_words_still_searches_with_them(app: App) -> None:
    project = app.current_project()
    record = _memory(app, project, "All of the things we know about it")
    _memory(app, project, "Deploys go through the zebra gateway quickly")

    assert match_expression("the of it") == '"the" OR "of" OR "it"'
    assert _candidate_ids(app, project, "of it") == [record.id]


def test_stop_words_are_dropped_when_other_words_remain() -> None:
    assert match_expression("What is the zebra gateway?") == '"zebra" OR "gateway"'


def test_at_most_max_terms_distinct_words_reach_the_match() -> None:
    words = [f"word{n}" for n in range(MAX_TERMS * 3)]

    expression = match_expression(" ".join(words + words))

    assert expression.split(" OR ") == [f'"{w}"' for w in words[:MAX_TERMS]]


@pytest.mark.parametrize(
    ("stored", "asked"),
    [
        ("Re-platforming the billing service onto Kubernetes", "replatforming billing"),
        ("Front-end builds run on Vite", "frontend builds"),
    ],
)
def test_a_hyphenated_compound_finds_the_same_word_written_as_one(
    app: App, stored: str, asked: str
) -> None:
    project = app.current_project()
    record = _memory(app, project, stored)
    _memory(app, project, "Builds of the mobile app run on the pelican runner pool")

    assert _candidate_ids(app, project, asked)[0] == record.id
    assert_fts_consistent(app.settings.db_path)


@pytest.mark.parametrize("asked", ["ADR0014", "ADR-0014", "adr 14", "ADR-14", "adr14"])
@pytest.mark.parametrize(
    "stored", ["14. Replace Terraform Cloud with S3", "ADR014: Replace Terraform Cloud with S3"]
)
def test_a_numbered_decision_is_found_however_its_number_is_written(
    app: App, stored: str, asked: str
) -> None:
    project = app.current_project()
    record = _decision(
        app, project, stored, "Terraform Cloud costs us too much for our 93 workspaces"
    )
    _decision(
        app, project, "3. Use Concourse for CI", "Builds need a pipeline that we can host ourselves"
    )
    _decision(app, project, "ADR041: Use PagerDuty", "Out-of-hours support needs paging and a rota")

    assert _candidate_ids(app, project, f"What did {asked} decide?")[0] == record.id


def test_a_single_digit_cited_record_keeps_its_number() -> None:
    assert match_expression("ADR 7") == '"adr" OR "adr7" OR "7"'
    assert match_expression("What is ADR-0007 about?") == '"adr" OR "0007" OR "adr7" OR "7"'


def test_a_hyphenated_query_word_is_sought_by_its_parts_alone() -> None:
    # The records holding "front-end" index "frontend" too: seeking both would count it twice.
    assert match_expression("front-end state-of-the-art 2019-01-02") == (
        '"front" OR "end" OR "state" OR "art" OR "2019" OR "01" OR "02"'
    )


@pytest.mark.parametrize("text", ["", "   ", "\n\t", "!!! ??? ...", '"*^():-', "\x00", "— … «»"])
def test_text_without_any_word_is_refused_as_an_invalid_query(app: App, text: str) -> None:
    project = app.current_project()

    with pytest.raises(InvalidQueryError):
        match_expression(text)
    with pytest.raises(InvalidQueryError):
        _candidate_ids(app, project, text)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(text=st.text())
def test_any_text_either_returns_candidates_or_is_refused_never_an_sqlite_error(
    app: App, text: str
) -> None:
    # The first example seeds the fixture's store; later ones only read it, so sharing it
    # across examples is sound.
    project = app.current_project()
    if not app.reader.list_records(project):
        _memory(app, project, "Deploys go through the zebra gateway")
        _memory(app, project, "Ünïcödé títlé wïth dïäcrïtïcs and 数据库 words")

    try:
        found = fts_candidates(app.db.connection(), text, RecordFilter(project.id), limit=10)
    except InvalidQueryError:
        return
    assert isinstance(found, list)


# --- how much of the query the best match holds ----------------------------------------------


def _coverage(app: App, project: Project, text: str) -> float:
    scope = RecordFilter(project.id, statuses=())
    return lexical_matches(app.db.connection(), text, scope, limit=50).coverage


def test_coverage_is_whole_when_the_best_match_holds_every_word_of_the_query(app: App) -> None:
    project = app.current_project()
    for i in range(6):
        _memory(app, project, f"Service number {i} logs to the shared collector")
    _memory(app, project, "Error QX-4711 means the zebra gateway rejected the token")
    assert _coverage(app, project, "zebra gateway QX-4711") == 1.0


def test_coverage_weighs_a_rare_word_above_a_common_one(app: App) -> None:
    project = app.current_project()
    for i in range(8):
        _memory(app, project, f"Service number {i} logs to the shared collector")
    rare = _coverage(app, project, "zebra collector")  # nothing holds zebra
    _memory(app, project, "The zebra stripes are painted by hand")
    common_missing = _coverage(app, project, "zebra collector")  # best match: zebra alone
    assert rare < 0.5 < common_missing < 1.0


def test_coverage_is_zero_when_nothing_matches(app: App) -> None:
    project = app.current_project()
    _memory(app, project, "Deploys go through the gateway")
    assert _coverage(app, project, "unrelated words entirely") == 0.0


def test_in_a_large_store_a_common_word_is_kept_when_it_is_the_only_one_found() -> None:
    from contextd.storage.sqlite.fulltext import _selective, _Word

    stats = {
        "database": _Word(0, frozenset()),
        "migrations": _Word(3300, None),
        "applied": _Word(0, frozenset()),
    }
    assert _selective(list(stats), stats, 10_000) == ["migrations"]
    stats["schema"] = _Word(40, frozenset(range(40)))
    assert _selective(list(stats), stats, 10_000) == ["schema"]


# --- word statistics, kept between searches -------------------------------------------------


def test_word_statistics_follow_a_write_through_the_same_connection(app: App) -> None:
    """How common a word is, and which records hold a rare one, is kept between searches;
    a write by this very connection (which SQLite's data_version does not count) renews it."""
    project = app.current_project()
    conn = app.db.connection()
    scope = RecordFilter(project.id)
    assert lexical_matches(conn, "zeppelin", scope, 10).hits == []
    record = _memory(app, project, "The zeppelin hangar keeps the build cache")
    assert app.db.connection() is conn
    found = lexical_matches(conn, "zeppelin", scope, 10)
    assert [rid for rid, _ in found.hits] == [record.id]
    assert found.coverage == 1.0


def test_word_statistics_follow_a_write_by_another_connection(app: App) -> None:
    project = app.current_project()
    _memory(app, project, "The hangar keeps the build cache")
    conn = app.db.connection()
    scope = RecordFilter(project.id)
    assert lexical_matches(conn, "zeppelin", scope, 10).coverage == 0.0
    with closing(sqlite3.connect(app.settings.db_path)) as other:
        other.execute(
            "UPDATE records SET title = 'The zeppelin hangar' WHERE seq = "
            "(SELECT min(seq) FROM records WHERE project_id = ?)",
            (project.id,),
        )
        other.commit()
    found = lexical_matches(conn, "zeppelin", scope, 10)
    assert len(found.hits) == 1
    assert found.coverage == 1.0
