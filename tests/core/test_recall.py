"""Recall: the best passages for a query packed into a token budget, and its CLI."""

import re
from pathlib import Path

import pytest

from contextd.app import App
from contextd.core.recall.packing import estimate_tokens
from contextd.core.recall.presentation import fence, fence_overhead
from contextd.core.recall.queries import passage
from contextd.errors import InvalidInputError
from contextd.models import (
    DecisionBody,
    Kind,
    MemoryBody,
    Project,
    Record,
    RecordDraft,
    SearchQuery,
)
from tests.conftest import DECISION, Cli


def _memory(app: App, title: str, *, category: str = "note", **fields: object) -> Record:
    draft = RecordDraft(
        kind=Kind.MEMORY,
        title=title,
        body=MemoryBody(),
        category=category,
        **fields,  # type: ignore[arg-type]
    )
    project: Project | None = None if fields.get("is_global") else app.current_project()
    return app.writer.create(draft, project, force=True)  # near-twins on purpose


def _queue_records(app: App) -> list[Record]:
    return [
        _memory(app, "The task queue retries a job three times before dead-lettering it"),
        _memory(app, "Task queue workers must be idempotent", category="gotcha"),
        _memory(app, "The task queue runs on three NATS nodes", category="architecture"),
        _memory(app, "Task queue dashboards live in grafana"),
        _memory(app, "Queue names use kebab-case everywhere", category="convention"),
    ]


def _ranked_ids(app: App, text: str) -> list[str]:
    query = SearchQuery(text=text, limit=40)
    return [h.record.id for h in app.search.search(app.current_project(), query).hits]


def test_recall_packs_every_passage_in_rank_order_when_the_budget_allows(app: App) -> None:
    _queue_records(app)
    packed = app.search.recall(app.current_project(), SearchQuery(text="task queue"))
    ranked = _ranked_ids(app, "task queue")
    assert [h.record.id for h in packed.hits] == ranked
    assert packed.omitted == 0
    assert packed.text == fence("\n\n".join(passage(h) for h in packed.hits))
    assert packed.tokens == estimate_tokens(packed.text)
    assert packed.budget == 6000


def test_a_passage_too_big_for_the_rest_of_the_budget_is_skipped_and_smaller_ones_packed(
    app: App,
) -> None:
    small = _queue_records(app)
    huge = _memory(
        app,
        "Task queue retry policy: " + "the task queue retries failed jobs with backoff. " * 60,
        priority=5,
    )
    assert len(huge.title) > 2900
    ranked = _ranked_ids(app, "task queue retries")
    assert ranked[0] == huge.id
    packed = app.search.recall(
        app.current_project(), SearchQuery(text="task queue retries"), budget=300
    )
    ids = [h.record.id for h in packed.hits]
    assert huge.id not in ids
    assert ids == [rid for rid in ranked if rid in ids]  # still in rank order
    assert set(ids) == {r.id for r in small} & set(ranked)
    assert packed.omitted == 1
    assert packed.tokens <= 300


def test_recall_stops_at_the_budget_and_counts_what_it_left_out(app: App) -> None:
    _queue_records(app)
    ranked = app.search.search(app.current_project(), SearchQuery(text="task queue", limit=40)).hits
    costs = [estimate_tokens(passage(h)) for h in ranked]
    budget = max(50, estimate_tokens(" " * fence_overhead()) + costs[0] + costs[1])
    packed = app.search.recall(app.current_project(), SearchQuery(text="task queue"), budget)
    assert 0 < len(packed.hits) < len(ranked)
    assert packed.omitted == len(ranked) - len(packed.hits)
    assert packed.tokens <= budget
    assert packed.budget == budget
    assert packed.hits[0].record.id == ranked[0].record.id


def test_the_packed_text_itself_fits_the_budget(app: App) -> None:
    """The agent receives `text`; by the store's own estimate it must not exceed the budget."""
    head = len(f"[note {'0' * 36} · verified 2026-01-01]\n")
    for n in range(6):
        title = f"The task queue fact number {n} is stored here"
        title += "!" * ((-(head + len(title))) % 4)  # each passage is whole 4-char tokens
        _memory(app, title)
    hits = app.search.search(
        app.current_project(), SearchQuery(text="task queue fact", limit=40)
    ).hits
    assert len(hits) == 6
    assert all(len(passage(h)) % 4 == 0 for h in hits)
    blocks = [passage(h) for h in hits]
    exact = estimate_tokens(fence("\n\n".join(blocks)))
    packed = app.search.recall(app.current_project(), SearchQuery(text="task queue fact"), exact)
    assert packed.omitted == 0
    assert packed.tokens == estimate_tokens(packed.text) <= exact
    # Without room for the separators, one passage no longer fits.
    tight = exact - estimate_tokens(" " * len("\n\n" * (len(blocks) - 1)))
    squeezed = app.search.recall(app.current_project(), SearchQuery(text="task queue fact"), tight)
    assert squeezed.omitted == 1
    assert estimate_tokens(squeezed.text) <= tight


@pytest.mark.parametrize("budget", [0, 10, 49, -5])
def test_a_budget_under_fifty_tokens_is_refused(app: App, budget: int) -> None:
    with pytest.raises(InvalidInputError, match="at least 50"):
        app.search.recall(app.current_project(), SearchQuery(text="task queue"), budget)


def test_a_budget_of_exactly_fifty_tokens_is_accepted(app: App) -> None:
    _queue_records(app)
    packed = app.search.recall(app.current_project(), SearchQuery(text="task queue"), 50)
    assert packed.tokens <= 50


def test_a_superseded_passage_says_it_is_not_current_and_names_its_replacement(
    app: App,
) -> None:
    old = _memory(app, "Deploys run on Jenkins nightly builds from the build server")
    new = _memory(app, "Releases ship through GitHub Actions workflows on every merge")
    app.writer.supersede(old.id, new.id)
    packed = app.search.recall(
        app.current_project(),
        SearchQuery(text="Jenkins nightly builds", include_superseded=True),
    )
    by_id = {h.record.id: passage(h) for h in packed.hits}
    assert f"NOT CURRENT, superseded by {new.id}" in by_id[old.id]
    assert "NOT CURRENT" not in by_id[new.id]
    assert f"NOT CURRENT, superseded by {new.id}" in packed.text


def test_a_passage_carries_the_id_category_verified_date_and_title(app: App) -> None:
    record = _memory(app, "Task queue workers must be idempotent", category="gotcha")
    hit = app.search.search(app.current_project(), SearchQuery(text="idempotent")).hits[0]
    text = passage(hit)
    head, title = text.split("\n")[:2]
    assert head == f"[gotcha {record.id} · verified {record.verified_at[:10]}]"
    assert title == record.title
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", record.verified_at[:10])


def test_a_decision_passage_is_labelled_by_kind_and_lists_its_fields(app: App) -> None:
    body = DecisionBody(
        problem="Redis pub/sub dropped tasks whenever workers reconnected during a deploy",
        why_chosen="NATS JetStream keeps durable consumers with acks and replay, so a "
        "worker that reconnects resumes where it stopped",
    )
    record = app.writer.create(
        RecordDraft(kind=Kind.DECISION, title="Use NATS for the task queue", body=body),
        app.current_project(),
    )
    hit = app.search.search(app.current_project(), SearchQuery(text="NATS task queue")).hits[0]
    lines = passage(hit).split("\n")
    assert lines[0].startswith(f"[decision {record.id} · verified ")
    assert f"problem: {body.problem}" in lines
    assert f"why_chosen: {body.why_chosen}" in lines
    assert not any(line.startswith("alternatives") for line in lines)


def test_global_and_linked_passages_say_so(app: App) -> None:
    shared = _memory(app, "Queue names use kebab-case everywhere", is_global=True)
    runbook = _memory(app, "Restart the broker with systemctl restart nats on the host")
    parent = _memory(app, "The task queue drops jobs on restart", related_to=(runbook.id,))
    packed = app.search.recall(app.current_project(), SearchQuery(text="task queue names"))
    by_id = {h.record.id: passage(h) for h in packed.hits}
    assert "global" in by_id[shared.id].split("\n")[0]
    assert f"linked from {parent.id}" in by_id[runbook.id].split("\n")[0]


@pytest.mark.usefixtures("repo")
def test_cli_recall_json_reports_budget_tokens_and_the_context(run: Cli) -> None:
    decision = run.json(*DECISION)
    out = run.json("recall", "task queue", "--budget", "400")
    assert set(out) == {"query", "project", "budget", "tokens", "omitted", "context", "results"}
    assert out["query"] == "task queue"
    assert out["project"] == "orbit"
    assert out["budget"] == 400
    assert 0 < out["tokens"] <= 400
    assert out["omitted"] == 0
    assert decision["id"] in out["context"]
    assert [r["id"] for r in out["results"]] == [decision["id"]]


@pytest.mark.usefixtures("repo")
def test_cli_recall_prints_the_context_to_stdout_and_the_summary_to_stderr(run: Cli) -> None:
    decision = run.json(*DECISION)
    result = run("recall", "task queue", "--budget", "400")
    assert result.exit_code == 0, result.output
    assert decision["id"] in result.stdout
    assert "Use NATS for the task queue" in result.stdout
    assert "passages" not in result.stdout
    assert re.search(r"1 passage, ~\d+/400 tokens", result.stderr)
    assert decision["id"] not in result.stderr


@pytest.mark.usefixtures("repo")
def test_cli_recall_with_nothing_stored_says_so(run: Cli) -> None:
    result = run("recall", "task queue")
    assert result.exit_code == 0
    assert "Nothing relevant stored." in result.stdout


@pytest.mark.usefixtures("repo")
def test_cli_recall_refuses_a_tiny_budget(run: Cli) -> None:
    result = run("recall", "task queue", "--budget", "10")
    assert result.exit_code == 2
    assert "at least 50" in result.stderr


@pytest.mark.usefixtures("repo")
def test_cli_search_since_takes_a_span_back_from_now(run: Cli) -> None:
    decision = run.json(*DECISION)
    since = run.json("search", "task queue", "--since", "30d")["results"]
    before = run.json("search", "task queue", "--before", "30d")["results"]
    assert [r["id"] for r in since] == [decision["id"]]
    assert before == []


@pytest.mark.usefixtures("repo")
@pytest.mark.parametrize("option", ["--since", "--before"])
def test_cli_search_refuses_a_date_it_cannot_read_naming_the_option(run: Cli, option: str) -> None:
    run.json(*DECISION)
    result = run("search", "task queue", option, "notadate")
    assert result.exit_code == 2
    assert option in result.stderr
    assert "notadate" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_recall_in_a_folder_outside_any_project_fails_with_not_found(
    run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("recall", "task queue")
    assert result.exit_code == 3


# --- context.max_entry_tokens: a long passage is cut, with a pointer to the whole record -------


def test_a_passage_longer_than_the_entry_limit_is_cut_at_a_word_with_a_pointer() -> None:
    from contextd.core.recall.queries import cut_passage

    text = "word " * 400
    cut = cut_passage(text, "0190abc", 100)
    assert estimate_tokens(cut) <= 100
    assert cut.startswith("word word")
    assert "get_entry 0190abc" in cut and "contextd show 0190abc" in cut
    assert " wor …" not in cut  # no word is split
    assert cut_passage("short text", "0190abc", 100) == "short text"


def test_recall_cuts_each_long_passage_to_max_entry_tokens(app: App) -> None:
    from msgspec.structs import replace

    from contextd.app import open_app

    long = _memory(app, "Task queue runbook " + "restart the workers one by one; " * 80)
    short = _memory(app, "The task queue runs on three NATS nodes")
    settings = replace(app.settings, context=replace(app.settings.context, max_entry_tokens=80))
    with open_app(settings) as limited:
        packed = limited.search.recall(limited.current_project(), SearchQuery(text="task queue"))
    inside = packed.text.split("\n\n", 1)[1].rsplit("\n</project-memory>", 1)[0]  # the fence
    blocks = {h.record.id: b for h, b in zip(packed.hits, inside.split("\n\n"), strict=True)}
    assert estimate_tokens(blocks[long.id]) <= 80
    assert f"get_entry {long.id}" in blocks[long.id]
    assert blocks[short.id] == passage(next(h for h in packed.hits if h.record.id == short.id))


@pytest.mark.usefixtures("repo")
def test_cli_recall_by_tag_alone_lists_the_tagged_records(run: Cli) -> None:
    tagged = run.json(
        "add", "Workers drain before a deploy", "--category", "gotcha", "--tag", "ops"
    )
    run.json("add", "The docs build with mkdocs", "--category", "convention")
    found = run.json("recall", "--tag", "ops")
    assert [r["id"] for r in found["results"]] == [tagged["id"]]
    assert [r["id"] for r in run.json("search", "--kind", "memory", "--tag", "ops")["results"]] == [
        tagged["id"]
    ]


@pytest.mark.usefixtures("repo")
def test_cli_recall_with_neither_query_nor_filter_says_what_to_give(run: Cli) -> None:
    result = run("recall")
    assert result.exit_code == 2
    assert "Give a query, or a filter" in result.stderr and "Traceback" not in result.output
