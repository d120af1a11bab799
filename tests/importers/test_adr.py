"""`contextd import adr`: a folder of ADRs (adr-tools' and MADR's layouts) as decisions, with the
status and supersession each one states, once."""

import json
import shutil
from pathlib import Path

import pytest

from contextd.app import App
from contextd.importers import read_adrs
from contextd.models import DecisionBody, Kind, Origin, Status
from tests.conftest import Cli, make_repo
from tests.importers.conftest import ADRS, stored

NATS = "2. Use NATS JetStream for the task queue"
REDIS = "4. Move the task queue to Redis Streams"
POSTGRES = "Use PostgreSQL for job metadata"


def test_each_adr_is_a_decision_and_readme_and_template_are_skipped(app: App, run: Cli) -> None:
    out = run.json("import", "adr", str(ADRS))

    assert out["counts"] == {
        "entries": 10,
        "imported": 10,
        "proposed": 0,
        "updated": 0,
        "already_stored": 0,
        "refused": 0,
    }
    records = stored(app)
    skipped = ("NUMBER. TITLE", "Architecture decisions", "{short title of solved problem")
    assert not any(title.startswith(skipped) for title in records)
    assert all(r.origin is Origin.IMPORT and r.tags == ("adr",) for r in records.values())
    assert records[NATS].kind is Kind.DECISION


def test_madr_sections_fill_the_decision_fields(app: App, run: Cli) -> None:
    run.json("import", "adr", str(ADRS))
    postgres = stored(app)[POSTGRES]

    body = postgres.body
    assert isinstance(body, DecisionBody)
    assert body.problem.startswith("Job metadata (owner, state, timings)")
    assert "Decision drivers: * queries across every worker's jobs" in " ".join(
        body.problem.split()
    )
    assert body.why_chosen.startswith("Chosen option: PostgreSQL, because")
    assert body.alternatives.split("\n") == [
        "* PostgreSQL",
        "* SQLite on each worker",
        "* DynamoDB",
    ]
    assert body.tradeoffs.endswith("Bad, because workers now need a connection pool.")
    assert postgres.created_at.startswith("2024-03-01")  # the front matter's date


def test_adr_tools_sections_and_date_line(app: App, run: Cli) -> None:
    run.json("import", "adr", str(ADRS))
    nats = stored(app)[NATS]

    body = nats.body
    assert isinstance(body, DecisionBody)
    assert body.problem.startswith("Workers pick up render jobs from a queue.")
    assert body.why_chosen.startswith("We will use NATS JetStream with durable consumers")
    assert "nats consumer pause ORBIT render" in body.tradeoffs  # a code block's "#" is no heading
    assert "drain before a rollout" in body.tradeoffs
    assert nats.created_at.startswith("2023-02-14")


def test_the_supersession_each_adr_states_links_the_records(app: App, run: Cli) -> None:
    run.json("import", "adr", str(ADRS))
    records = stored(app)

    # Stated only by the later ADR ("Supersedes [2. …](0002-….md)"): the old one never said so.
    assert records[NATS].status is Status.SUPERSEDED
    assert records[NATS].superseded_by == records[REDIS].id
    # "Superseded by ADR-0007", by number.
    structlog = records["6. Log with structlog"]
    assert structlog.status is Status.SUPERSEDED
    assert structlog.superseded_by == records["7. Log JSON with the standard library"].id
    # A successor that is not in the folder: archived, saying which.
    kafka = records["8. Publish job events to Kafka"]
    assert kafka.status is Status.ARCHIVED and kafka.superseded_by is None
    assert "12. Publish job events to SQS" in (kafka.archived_reason or "")
    # A sentence under the title, as some teams write it, linking the successor's file.
    django = records["10. Render pages with Django templates"]
    assert django.superseded_by == records["11. Render pages with htmx partials"].id


def test_a_templates_guidance_quoted_in_the_status_is_not_the_status(app: App, run: Cli) -> None:
    run.json("import", "adr", str(ADRS))
    htmx = stored(app)["11. Render pages with htmx partials"]

    assert htmx.status is Status.ACTIVE  # not "Superseded by ADRzzz"


def test_a_rejected_adr_is_archived_with_its_status(app: App, run: Cli) -> None:
    run.json("import", "adr", str(ADRS))
    gateway = stored(app)["5. A GraphQL gateway in front of the services"]

    assert gateway.status is Status.ARCHIVED
    assert gateway.archived_reason == "The ADR's status is rejected."


def test_an_adr_too_thin_for_a_decision_is_kept_whole_as_a_memory(app: App, run: Cli) -> None:
    run.json("import", "adr", str(ADRS))
    thin = stored(app)["7. Log JSON with the standard library"]

    assert thin.kind is Kind.MEMORY and thin.category == "decision"
    assert thin.title == (
        "7. Log JSON with the standard library\n\nDecision: Use logging with python-json-logger."
    )  # the date line and the status section are not part of the text


def test_a_second_import_adds_nothing(app: App, run: Cli) -> None:
    run.json("import", "adr", str(ADRS))
    again = run.json("import", "adr", str(ADRS))

    assert again["counts"]["imported"] == 0 and again["counts"]["already_stored"] == 10
    assert len(stored(app)) == 10


def _write_adr(
    path: Path,
    title: str,
    context: str,
    decision: str,
    *,
    preamble: str = "",
    status: str = "Accepted",
) -> None:
    """An adr-tools ADR: its title, then Status, Context and Decision sections."""
    path.write_text(
        f"# {title}\n\n{preamble}## Status\n\n{status}\n\n## Context\n\n{context}\n\n"
        f"## Decision\n\n{decision}\n",
        "utf-8",
    )


NEW_DECISION = (
    "We will use NATS JetStream with work-queue streams and one consumer per job type, because "
    "a stalled job type then never holds up the others."
)


def _edit_decision(folder: Path) -> None:
    adr = folder / "0002-use-nats-jetstream-for-the-task-queue.md"
    text = adr.read_text("utf-8")
    start, end = text.index("## Decision\n"), text.index("## Consequences")
    adr.write_text(f"{text[:start]}## Decision\n\n{NEW_DECISION}\n\n{text[end:]}", "utf-8")


def test_an_adr_edited_since_its_import_updates_its_record_in_place(
    app: App, run: Cli, adr_copy: Path
) -> None:
    run.json("import", "adr", str(adr_copy))
    before = stored(app)[NATS]
    run.json("update", before.id, "--tag", "adr", "--tag", "queue", "--priority", "4")
    _edit_decision(adr_copy)

    again = run.json("import", "adr", str(adr_copy))

    assert again["counts"]["imported"] == 0 and again["counts"]["updated"] == 1
    assert again["updated"][0]["id"] == before.id and again["written"] is True
    records = stored(app)
    assert len(records) == 10
    after = records[NATS]
    assert after.id == before.id and isinstance(after.body, DecisionBody)
    assert " ".join(after.body.why_chosen.split()) == NEW_DECISION
    assert after.body.problem == before.body.problem  # type: ignore[union-attr]
    assert after.tags == ("adr", "queue") and after.priority == 4  # what was set here stays
    assert after.status is Status.SUPERSEDED and after.superseded_by == records[REDIS].id
    text = run("import", "adr", str(adr_copy)).output
    assert "10 already stored." in text and "Updated" not in text


def test_a_dry_run_says_which_edited_adr_it_would_update_and_changes_nothing(
    app: App, run: Cli, adr_copy: Path
) -> None:
    run.json("import", "adr", str(adr_copy))
    before = stored(app)[NATS]
    _edit_decision(adr_copy)

    result = run("import", "adr", str(adr_copy), "--dry-run")

    assert result.exit_code == 0
    assert "would update 1." in result.output
    assert "Would update" in result.output and "0002-use-nats" in result.output
    assert stored(app)[NATS] == before


def test_an_edit_that_adds_a_secret_is_refused_and_nothing_changes(
    app: App, run: Cli, adr_copy: Path
) -> None:
    run.json("import", "adr", str(adr_copy))
    before = stored(app)[NATS]
    _edit_decision(adr_copy)
    adr = adr_copy / "0002-use-nats-jetstream-for-the-task-queue.md"
    key = "AKIA" + "QWERTYUIOPASDFGH"
    adr.write_text(adr.read_text("utf-8").replace("job type,", f"job type (key {key}),"), "utf-8")

    result = run("import", "adr", str(adr_copy), "--json")

    assert result.exit_code == 2
    assert json.loads(result.stdout)["counts"]["refused"] == 1
    assert key not in result.output
    assert stored(app)[NATS] == before


def test_a_retitled_adr_updates_the_record_of_its_number(
    app: App, run: Cli, adr_copy: Path
) -> None:
    run.json("import", "adr", str(adr_copy))
    before = stored(app)[NATS]
    assert before.retrieval_hints == ("ADR-2",)
    adr = adr_copy / "0002-use-nats-jetstream-for-the-task-queue.md"
    retitled = "2. Queue render jobs on NATS JetStream work queues"
    adr.write_text(adr.read_text("utf-8").replace(f"# {NATS}", f"# {retitled}"), "utf-8")
    _edit_decision(adr_copy)

    again = run.json("import", "adr", str(adr_copy))

    assert again["counts"]["updated"] == 1 and again["counts"]["imported"] == 0
    records = stored(app)
    assert NATS not in records and records[retitled].id == before.id
    assert len(records) == 10


def test_two_adrs_of_one_number_are_never_taken_for_each_other(
    app: App, run: Cli, adr_copy: Path
) -> None:
    run.json("import", "adr", str(adr_copy))
    before = stored(app)[NATS]
    _write_adr(
        adr_copy / "0002-use-sqs-for-webhooks.md",
        "2. Use SQS for outgoing webhooks",
        "Outgoing webhooks to customers time out and must be retried for a day.",
        "We will queue outgoing webhooks on SQS, because its redrive policy retries them for days "
        "without a worker of ours keeping count.",
    )

    again = run.json("import", "adr", str(adr_copy))

    assert again["counts"]["imported"] == 1 and again["counts"]["updated"] == 0
    records = stored(app)
    assert records[NATS] == before
    assert records["2. Use SQS for outgoing webhooks"].id != before.id


def test_an_adr_is_found_by_its_number_however_it_is_cited(app: App, run: Cli) -> None:
    run.json("import", "adr", str(ADRS))
    postgres = stored(app)[POSTGRES]  # MADR: the number is only in the file name

    for cited in ("ADR-0003", "ADR 3", "adr0003"):
        hits = run.json("search", f"what does {cited} say")["results"]
        assert hits[0]["id"] == postgres.id, cited


def test_a_record_written_here_is_never_overwritten_by_an_adr_of_its_title(
    app: App, run: Cli
) -> None:
    mine = run.json(
        "decide",
        NATS,
        "--problem",
        "We needed a queue that keeps jobs when a worker restarts mid-render.",
        "--why",
        "It was the queue the team already ran elsewhere, with replay and durable consumers.",
    )

    out = run.json("import", "adr", str(ADRS))

    assert out["counts"]["updated"] == 0 and out["counts"]["already_stored"] == 1
    assert run.json("show", mine["id"])["body"]["why_chosen"].startswith("It was the queue")


def test_search_finds_the_current_decision_and_not_the_one_it_replaced(app: App, run: Cli) -> None:
    run.json("import", "adr", str(ADRS))

    hits = run.json("search", "which queue do the render workers use")["results"]

    titles = [hit["title"].split("\n", 1)[0] for hit in hits]
    assert titles[0] == REDIS
    assert NATS not in titles


def test_a_folder_without_adrs_is_one_sentence(app: App, run: Cli, tmp_path: Path) -> None:
    empty = tmp_path / "adr"
    empty.mkdir()
    (empty / "README.md").write_text("# Decisions\n", encoding="utf-8")

    result = run("import", "adr", str(empty))

    assert result.exit_code == 2
    assert f"No ADRs in {empty}: expected one Markdown file per decision" in result.output
    assert "Traceback" not in result.output


def test_broken_front_matter_names_the_file_and_stores_nothing(
    app: App, run: Cli, adr_copy: Path
) -> None:
    (adr_copy / "0009-broken.md").write_text("---\nstatus accepted\n# 9. Broken\n", "utf-8")

    result = run("import", "adr", str(adr_copy))

    assert result.exit_code == 2
    assert "0009-broken.md has front matter that cannot be read" in result.output
    assert stored(app) == {}


def test_an_adr_holding_a_secret_is_refused_and_the_rest_imported(
    app: App, run: Cli, adr_copy: Path
) -> None:
    leaked = adr_copy / "0003-use-postgresql-for-job-metadata.md"
    key = "AKIA" + "QWERTYUIOPASDFGH"
    leaked.write_text(
        leaked.read_text("utf-8").replace("plain SQL", f"plain SQL (key {key})"), "utf-8"
    )

    result = run("import", "adr", str(adr_copy), "--json")

    assert result.exit_code == 2
    report = json.loads(result.stdout)
    assert report["counts"]["refused"] == 1 and report["counts"]["imported"] == 9
    assert key not in result.output
    assert POSTGRES not in stored(app) and len(stored(app)) == 9


def test_an_adr_added_later_supersedes_the_stored_one_it_names(
    app: App, run: Cli, adr_copy: Path
) -> None:
    run.json("import", "adr", str(adr_copy))
    _write_adr(
        adr_copy / "0009-run-the-task-queue-on-sqs.md",
        "9. Run the task queue on SQS",
        "The platform team now offers SQS with dead-letter queues and alarms, and nobody wants "
        "to page for Redis at night.",
        "We will run the render queue on SQS, because the platform team operates it and its "
        "visibility timeout redelivers a job whose worker died.",
        preamble="Date: 2025-02-03\n\n",
        status="Accepted\n\nSupersedes ADR-0004",
    )

    again = run.json("import", "adr", str(adr_copy))

    assert again["counts"]["imported"] == 1 and again["counts"]["already_stored"] == 10
    records = stored(app)
    assert records[REDIS].status is Status.SUPERSEDED
    assert records[REDIS].superseded_by == records["9. Run the task queue on SQS"].id


def test_attach_points_at_the_projects_adr_folder_without_importing_it(
    run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_repo(tmp_path / "orbit")
    shutil.copytree(ADRS, project / "docs" / "architecture" / "decisions")
    monkeypatch.chdir(project)

    shown = run("attach")
    out = run.json("attach")

    assert shown.exit_code == 0, shown.output
    assert (
        "Found 10 ADRs in docs/architecture/decisions: "
        "`contextd import adr docs/architecture/decisions` brings them in"
    ) in shown.output
    assert out["adrs"] == {"folder": "docs/architecture/decisions", "count": 10}
    assert run.json("memories")["records"] == []  # pointed at, not imported


def test_attach_follows_adr_tools_own_setting_and_stays_quiet_without_adrs(
    run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_repo(tmp_path / "orbit")
    monkeypatch.chdir(project)
    assert run.json("attach")["adrs"] is None

    shutil.copytree(ADRS, project / "records" / "decisions")
    (project / ".adr-dir").write_text("records/decisions\n", encoding="utf-8")

    assert run.json("attach")["adrs"] == {"folder": "records/decisions", "count": 10}
    shutil.copytree(ADRS, tmp_path / "elsewhere")
    shutil.rmtree(project / "records")
    (project / ".adr-dir").write_text("../elsewhere\n", encoding="utf-8")
    assert run.json("attach")["adrs"] is None  # never a folder outside the project


def test_titles_as_people_write_them(tmp_path: Path) -> None:
    (tmp_path / "0025-automatic-code-merge.md").write_text(
        "#25. Automatic code merging\n\n**Date:** 2022-03-15\n\n## Context\n\nText.\n", "utf-8"
    )
    (tmp_path / "0026-no-title-heading.md").write_text(
        "## Context\n\nSomeone forgot the title.\n\n## Decision\n\nKeep going.\n", "utf-8"
    )

    titles = [entry.draft.title.split("\n", 1)[0] for entry in read_adrs(tmp_path)]

    assert titles == ["25. Automatic code merging", "26. No title heading"]


def test_an_adr_replaced_by_two_is_superseded_by_the_first_and_related_to_the_other(
    app: App, run: Cli, tmp_path: Path
) -> None:
    folder = tmp_path / "adr"
    folder.mkdir()
    context = "Workers and the scheduler share one Redis instance for jobs and for locks."
    _write_adr(
        folder / "0001-use-redis-for-jobs-and-locks.md",
        "1. Use Redis for jobs and locks",
        context,
        "We will keep jobs and locks in one Redis, because one server is simpler to run.",
        status="Superseded by ADR-0002 and ADR-0003",
    )
    _write_adr(
        folder / "0002-move-jobs-to-nats.md",
        "2. Move jobs to NATS JetStream",
        context,
        "We will move jobs to NATS JetStream, because its durable consumers survive deploys.",
    )
    _write_adr(
        folder / "0003-take-locks-in-postgres.md",
        "3. Take locks in PostgreSQL",
        context,
        "We will take advisory locks in PostgreSQL, because the job metadata lives there.",
    )
    _write_adr(
        folder / "0004-cache-sessions-in-redis.md",
        "4. Cache sessions in Redis",
        context,
        "We will keep only the session cache in Redis, because nothing else needs it now.",
        status="Accepted\n\nSupersedes [1. Use Redis for jobs and locks]"
        "(0001-use-redis-for-jobs-and-locks.md)",
    )

    run.json("import", "adr", str(folder))

    records = stored(app)
    old = records["1. Use Redis for jobs and locks"]
    assert old.status is Status.SUPERSEDED
    assert old.superseded_by == records["2. Move jobs to NATS JetStream"].id
    assert set(old.related_to) == {
        records["3. Take locks in PostgreSQL"].id,
        records["4. Cache sessions in Redis"].id,  # it says it supersedes the first too
    }


GPIO_CONTEXT = (
    "The board exposes its sensors through GPIO pins, and the readers need one library that "
    "survives kernel upgrades."
)
GPIO_DECISION = (
    "We will read the pins through libgpiod, because the sysfs interface is deprecated in the "
    "kernel and goes away in the next long-term release."
)


def test_a_short_real_title_is_kept_and_a_proposed_adr_waits_for_review(
    app: App, run: Cli, adr_copy: Path
) -> None:
    _write_adr(adr_copy / "0011-gpio.md", "GPIO", GPIO_CONTEXT, GPIO_DECISION)
    _write_adr(
        adr_copy / "0012-read-sensors-twice.md",
        "12. Read every sensor twice",
        GPIO_CONTEXT,
        "We will read each sensor twice and keep the median, because single reads of the cheap "
        "sensors jump by several degrees.",
        status="Proposed",
    )
    out = run.json("import", "adr", str(adr_copy))
    assert out["counts"]["refused"] == 0 and out["counts"]["proposed"] == 1
    records = stored(app)
    assert records["GPIO"].kind is Kind.DECISION  # the source's title, however short
    assert "12. Read every sensor twice" not in records  # not decided: not current truth
    waiting = run.json("review")["waiting"]
    assert [(w["title"], w["asked_by"]) for w in waiting] == [
        ("12. Read every sensor twice", "proposal")
    ]
    assert "proposed" in run("review").stdout
    again = run.json("import", "adr", str(adr_copy))
    assert again["counts"]["proposed"] == 0 and len(run.json("review")["waiting"]) == 1


def test_a_fresh_import_has_no_quality_issue_from_its_own_tags_or_dates(app: App, run: Cli) -> None:
    """The ADRs' shared "adr" tag is provenance, not a topic, and their dates say when they
    were decided, not when they were last checked."""
    run.json("import", "adr", str(ADRS))
    issues = run.json("quality")["issues"]
    assert [i for i in issues if i["kind"] in ("isolated", "stale")] == []
