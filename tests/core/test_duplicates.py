"""Restatements are refused (superseded and archived ones included), similar records reported."""

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from contextd.app import App
from contextd.errors import DuplicateError
from contextd.models import Kind, MemoryBody, RecordDraft
from tests.conftest import DECISION, POSTGRES, Cli, make_repo

NATS = "GPU scheduler uses NATS JetStream for task transport between coordinator and workers"

pytestmark = pytest.mark.usefixtures("repo")


def test_the_same_text_again_is_refused_naming_the_record_and_what_to_do(run: Cli) -> None:
    first = run.json("add", NATS, "--category", "architecture")
    again = run("add", NATS.upper(), "--category", "architecture")
    assert again.exit_code == 4
    assert first["id"] in again.stderr
    for command in ("contextd update", "contextd verify", "contextd supersede", "--force"):
        assert command in again.stderr
    assert len(run.json("memories")["records"]) == 1


def test_force_stores_a_restatement_anyway(run: Cli) -> None:
    run.json("add", NATS, "--category", "architecture")
    forced = run.json("add", NATS, "--category", "architecture", "--force")
    assert len(run.json("memories")["records"]) == 2
    assert forced["similar"] and forced["similar"][0]["similarity"] > 0.99


def test_a_near_identical_wording_is_refused_by_meaning(run: Cli) -> None:
    run.json("add", NATS, "--category", "architecture")
    reworded = NATS.replace("between", "among")
    result = run("add", reworded, "--category", "architecture", "--json")
    assert result.exit_code == 4
    assert json.loads(result.stdout)["error"]["type"] == "DuplicateError"
    assert "% the same as" in result.stderr


def test_restating_a_superseded_decision_says_the_team_moved_away(run: Cli) -> None:
    old = run.json(*DECISION)
    new = run.json(*POSTGRES)
    run.json("supersede", old["id"], "--by", new["id"])
    result = run(*DECISION)
    assert result.exit_code == 4
    assert "superseded on" in result.stderr and new["id"] in result.stderr
    assert "moved away" in result.stderr


def test_restating_an_archived_record_points_at_unarchive(run: Cli) -> None:
    record = run.json("add", NATS, "--category", "architecture")
    run.json("archive", record["id"])
    result = run("add", NATS, "--category", "architecture")
    assert result.exit_code == 4
    assert f"contextd unarchive {record['id']}" in result.stderr


def test_a_similar_record_is_reported_and_the_write_proceeds(run: Cli) -> None:
    first = run.json("add", NATS, "--category", "architecture")
    second = run.json(
        "add",
        "The GPU scheduler uses NATS JetStream to move tasks between coordinator and workers",
        "--category",
        "architecture",
    )
    assert [s["id"] for s in second["similar"]] == [first["id"]]
    assert 0.65 <= second["similar"][0]["similarity"] < 0.9
    text = run(
        "add",
        "GPU scheduler uses Redis streams for task transport between coordinator and workers",
        "--category",
        "architecture",
    ).stdout
    assert "Similar records" in text


def test_an_update_that_restates_another_record_is_refused_unless_forced(run: Cli) -> None:
    first = run.json("add", NATS, "--category", "architecture")
    other = run.json(
        "add", "Builds need Node 20 or newer on every CI runner", "--category", "gotcha"
    )
    refused = run("update", other["id"], "--title", NATS)
    assert refused.exit_code == 4 and first["id"] in refused.stderr
    assert run.json("show", other["id"])["title"].startswith("Builds")
    assert run.json("update", other["id"], "--title", NATS, "--force")["title"] == NATS


def test_another_projects_record_is_no_duplicate(
    run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run.json("add", NATS, "--category", "architecture")
    monkeypatch.chdir(make_repo(tmp_path / "sable"))
    run.json("attach")
    assert run.json("add", NATS, "--category", "architecture")["similar"] == []


def test_supersedes_records_and_replaces_in_one_step(run: Cli) -> None:
    old = run.json(*DECISION)
    new = run.json(*POSTGRES, "--supersedes", old["id"][:13])
    shown = run.json("show", old["id"])
    assert shown["status"] == "superseded" and shown["superseded_by"] == new["id"]
    assert [r["id"] for r in run.json("search", "task queue")["results"]] == [new["id"]]


def test_supersedes_allows_restating_the_record_it_replaces(run: Cli) -> None:
    old = run.json("add", NATS, "--category", "architecture")
    new = run.json(
        "add", NATS + " (since March)", "--category", "architecture", "--supersedes", old["id"]
    )
    assert run.json("show", old["id"])["superseded_by"] == new["id"]


def test_supersedes_an_unknown_id_stores_nothing(run: Cli) -> None:
    result = run(*DECISION, "--supersedes", "0123456789ab")
    assert result.exit_code == 3
    assert run.json("memories", "--all")["records"] == []


def test_a_record_that_seems_to_replace_another_is_flagged_with_the_command(run: Cli) -> None:
    old = run.json(
        "add",
        "Background jobs go through RQ backed by the Redis instance we run",
        "--category",
        "architecture",
    )
    new = run(
        "add",
        "Background jobs moved to NATS JetStream instead of RQ on Redis",
        "--category",
        "architecture",
    )
    assert new.exit_code == 0
    assert "seems to replace" in new.stdout and "contextd supersede" in new.stdout
    flagged = run.json(
        "add",
        "Background jobs no longer go through RQ backed by Redis; Celery runs them",
        "--category",
        "architecture",
    )["similar"]
    assert [s["id"] for s in flagged if s.get("likely_replaces")] == [old["id"]]


def test_a_write_embeds_once_and_searches_neighbours_once(app: App) -> None:
    """The duplicate check's neighbour search also tells what the new record resembles."""
    assert app.vector_index is not None and app.indexer is not None
    project = app.current_project()
    app.writer.create(
        RecordDraft(
            Kind.MEMORY,
            "Workers drain the task queue before each deploy",
            MemoryBody(),
            category="gotcha",
        ),
        project,
    )
    index, provider = app.vector_index, app.indexer.provider
    searches: list[int] = []
    embeds: list[int] = []
    search, embed = index.search, provider.embed_documents

    def counted_search(*args: Any, **kwargs: Any) -> Any:
        searches.append(1)
        return search(*args, **kwargs)

    def counted_embed(texts: list[str]) -> Any:
        embeds.append(len(texts))
        return embed(texts)

    index.search = counted_search  # type: ignore[method-assign]
    provider.embed_documents = counted_embed  # type: ignore[method-assign]
    stored = app.writer.record(
        RecordDraft(
            Kind.MEMORY,
            "Workers drain the task queue before every deploy starts",
            MemoryBody(),
            category="gotcha",
        ),
        project,
        force=True,
    )
    assert searches == [1] and embeds == [1]
    assert [s.record.title for s in stored.similar] == [
        "Workers drain the task queue before each deploy"
    ]


def test_a_fact_another_writer_stored_while_this_one_was_prepared_is_refused(app: App) -> None:
    """The check runs again under the write lock only when something was committed since the
    write was prepared, and then it still catches the same fact stored meanwhile."""
    project = app.current_project()
    fact = "Workers drain the task queue before each deploy"

    def draft() -> RecordDraft:
        return RecordDraft(Kind.MEMORY, fact, MemoryBody(), category="gotcha")

    writer = app.writer
    prepare = writer._prepare

    def prepared_while_another_writes(*args: Any, **kwargs: Any) -> Any:
        done = prepare(*args, **kwargs)
        writer._prepare = prepare  # type: ignore[method-assign]
        other = threading.Thread(target=lambda: writer.record(draft(), project))
        other.start()  # another connection, as another process would be
        other.join()
        return done

    writer._prepare = prepared_while_another_writes  # type: ignore[method-assign]
    with pytest.raises(DuplicateError):
        writer.record(draft(), project)
    assert [r.title for r in app.reader.list_records(project)].count(fact) == 1

    assert app.vector_index is not None
    index = app.vector_index
    searches: list[int] = []
    search = index.search

    def counted_search(*args: Any, **kwargs: Any) -> Any:
        searches.append(1)
        return search(*args, **kwargs)

    index.search = counted_search  # type: ignore[method-assign]
    writer.record(
        RecordDraft(
            Kind.MEMORY, "Deploys wait for the nightly backup", MemoryBody(), category="gotcha"
        ),
        project,
    )
    assert searches == [1]  # nothing committed meanwhile: one check


def test_a_checkpoint_is_never_refused_for_resembling_an_earlier_checkpoint(run: Cli) -> None:
    first = run.json(
        "checkpoint",
        "Moving the task queue to NATS JetStream",
        "--goal",
        "Workers consume from JetStream with durable consumers",
        "--done",
        "Publisher switched to JetStream",
        "--next",
        "Switch the workers",
    )
    second = run(
        "checkpoint",
        "Moving the task queue to NATS JetStream",
        "--goal",
        "Workers consume from JetStream with durable consumers",
        "--done",
        "Publisher switched to JetStream",
        "--done",
        "Workers switched",
        "--next",
        "Remove the Redis client",
        "--json",
    )
    assert second.exit_code == 0, second.output
    assert json.loads(second.stdout)["id"] != first["id"]


def test_a_checkpoint_restating_a_superseded_decision_is_still_refused(run: Cli) -> None:
    old = run.json(*DECISION)
    run.json(*POSTGRES, "--supersedes", old["id"])
    result = run("checkpoint", "Use NATS for the task queue")
    assert result.exit_code == 4 and "repeats decision" in result.stderr


RULE = "Never let import-worker call metrics-agent"


@pytest.mark.usefixtures("local_model")  # the real model puts these at cosine 0.9 and above
@pytest.mark.parametrize(
    "other",
    [
        "Always let import-worker call metrics-agent",  # the negation reversed
        "Never let metrics-agent call import-worker",  # the roles reversed
        "Never let export-worker call metrics-agent",  # another component
        "Never let import-worker call metrics-agent-v2",  # another version of it
        "Never let import-worker call metrics-agent twice",  # another number
    ],
)
def test_a_rule_that_says_something_else_is_stored_however_close_its_vector(
    run: Cli, other: str
) -> None:
    rule = run.json("add", RULE, "--category", "convention")
    stored = run("add", other, "--category", "convention", "--json")
    assert stored.exit_code == 0, stored.output
    similar = json.loads(stored.stdout)["similar"]
    assert [s["id"] for s in similar] == [rule["id"]]  # still shown beside it, to judge
    assert similar[0]["similarity"] >= 0.9  # what a vector-only guard refused


@pytest.mark.usefixtures("local_model")
def test_a_restatement_of_a_rule_is_still_refused_by_the_real_model(run: Cli) -> None:
    rule = run.json("add", RULE, "--category", "convention")
    for again in (RULE + ".", "Never let the import-worker call metrics-agent"):
        refused = run("add", again, "--category", "convention")
        assert refused.exit_code == 4, again
        assert rule["id"] in refused.stderr and "% the same as" in refused.stderr
    assert len(run.json("memories")["records"]) == 1
