"""Recording each kind of record, and every refusal of a thin or malformed one."""

import pytest

from tests.conftest import DECISION, Cli


@pytest.mark.usefixtures("repo")
def test_every_kind_returns_its_stored_record_with_an_id(run: Cli) -> None:
    memory = run.json(
        "add",
        "GPU scheduler uses NATS for task transport",
        "--category",
        "Architecture",
        "--tag",
        "Queue",
        "--tag",
        "queue",
        "--hint",
        "message bus",
        "--priority",
        "4",
    )
    decision = run.json(
        *DECISION,
        "--alternatives",
        "Redis streams, RabbitMQ",
        "--tried",
        "Redis pub/sub for two months",
        "--tradeoffs",
        "One more service",
    )
    constraint = run.json(
        "constrain",
        "Never edit an applied migration",
        "--reason",
        "Applied migrations are checksummed and edits break deploys",
        "--hardness",
        "absolute",
        "--scope",
        "./migrations/**",
        "--incident",
        "March outage",
    )
    pipeline = run.json(
        "pipeline",
        "Release",
        "--purpose",
        "Ship a tagged build safely to prod",
        "--step",
        "run tests",
        "--step",
        "tag",
        "--step",
        "deploy",
    )
    checkpoint = run.json(
        "checkpoint",
        "worker heartbeat completed",
        "--goal",
        "GPU scheduling",
        "--done",
        "Coordinator",
        "--next",
        "Lease-based GPU allocation",
        "--problem",
        "Worker reconnect",
    )
    for record in (memory, decision, constraint, pipeline, checkpoint):
        assert len(record["id"]) == 36 and record["status"] == "active"
    assert memory["category"] == "architecture"
    assert memory["tags"] == ["queue"] and memory["priority"] == 4
    assert memory["retrieval_hints"] == ["message bus"]
    assert decision["body"]["alternatives"] == "Redis streams, RabbitMQ"
    assert decision["body"]["what_we_tried"] == "Redis pub/sub for two months"
    assert constraint["body"] == {
        "reason": "Applied migrations are checksummed and edits break deploys",
        "hardness": "absolute",
        "scope": ["migrations/**"],
        "triggering_incident": "March outage",
    }
    assert pipeline["body"]["steps"] == ["run tests", "tag", "deploy"]
    assert checkpoint["body"] == {
        "goal": "GPU scheduling",
        "done": ["Coordinator"],
        "next": ["Lease-based GPU allocation"],
        "problem": "Worker reconnect",
    }
    listed = run.json("memories")["records"]
    assert {r["kind"] for r in listed} == {
        "memory",
        "decision",
        "constraint",
        "pipeline",
        "checkpoint",
    }


def test_ids_are_time_ordered(run: Cli, repo: object) -> None:
    ids = [
        run.json("add", f"Fact number {n} about the build", "--category", "note")["id"]
        for n in range(5)
    ]
    assert ids == sorted(ids)


@pytest.mark.usefixtures("repo")
@pytest.mark.parametrize(
    ("args", "field_hint"),
    [
        (["--problem", "Too short", "--why", "x" * 60], "--problem"),
        (["--problem", "p" * 40, "--why", "Because it is nicer"], "--why"),
    ],
)
def test_a_thin_decision_is_refused_naming_the_field(
    run: Cli, args: list[str], field_hint: str
) -> None:
    result = run("decide", "Use NATS for the task queue", *args)
    assert result.exit_code == 2
    assert field_hint in result.stderr and "at least" in result.stderr
    assert result.stdout == ""
    assert run.json("memories")["records"] == []


@pytest.mark.usefixtures("repo")
def test_a_thin_decision_reports_the_field_in_json(run: Cli) -> None:
    result = run(
        "decide", "Use NATS for the task queue", "--problem", "p" * 40, "--why", "short", "--json"
    )
    assert result.exit_code == 2
    assert '"field": "why_chosen"' in result.stdout


@pytest.mark.usefixtures("repo")
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["add", "Node 20 is required for the build"], "Missing option '--category'"),
        (["add", "Node 20 is required for the build", "--category", "two words"], "one lower-case"),
        (["add", "short", "--category", "gotcha"], "memory text is 5 characters"),
        (
            ["add", "Node 20 is required for the build", "--category", "gotcha", "--priority", "9"],
            "--priority",
        ),
        (["add", "Node 20 is required\x00 for the build", "--category", "gotcha"], "NUL"),
        (["add", "Node 20 is required for the build", "--category", "gotcha", "--tag", " "], "Tag"),
        (
            [
                "constrain",
                "Never edit applied migrations",
                "--reason",
                "they break",
                "--hardness",
                "absolute",
            ],
            "--reason",
        ),
        (
            [
                "constrain",
                "Never edit applied migrations",
                "--reason",
                "r" * 40,
                "--hardness",
                "sometimes",
            ],
            "--hardness",
        ),
        (["pipeline", "Release", "--purpose", "ship", "--step", "tag"], "--purpose"),
        (["pipeline", "Release", "--purpose", "Ship a tagged build safely"], "--step"),
        (["checkpoint", "wip"], "checkpoint summary"),
        (
            [
                "add",
                "Node 20 is required for the build",
                "--category",
                "gotcha",
                "--related",
                "01234567-0000",
            ],
            "No record",
        ),
        (["add", "x" * 20_001, "--category", "gotcha"], "limit is 20000"),
    ],
)
def test_malformed_records_are_refused_with_one_sentence(
    run: Cli, args: list[str], expected: str
) -> None:
    result = run(*args)
    assert result.exit_code in (2, 3)
    assert expected in result.stderr
    assert "Traceback" not in result.output
    assert run.json("memories")["records"] == []


def test_a_global_record_needs_no_project_and_shows_in_every_project(
    run: Cli, repo: object, tmp_path: object
) -> None:
    record = run.json(
        "add", "Prefer small commits with why in the body", "--category", "preference", "--global"
    )
    assert record["project_id"] is None
    listed = run.json("memories")["records"]
    assert [r["id"] for r in listed] == [record["id"]]


@pytest.mark.usefixtures("repo")
def test_related_ids_are_resolved_from_prefixes(run: Cli) -> None:
    first = run.json(*DECISION)
    second = run.json(
        "add",
        "Workers ack after the handler commits",
        "--category",
        "convention",
        "--related",
        first["id"][:13],
    )
    assert second["related_to"] == [first["id"]]


@pytest.mark.usefixtures("repo")
def test_every_thin_field_is_named_with_its_flag_at_once(run: Cli) -> None:
    result = run("decide", "Short", "--problem", "too short", "--why", "no")
    assert result.exit_code == 2
    message = result.stderr
    assert "3 fields need work" in message and "(set with --problem, --why)" in message
    assert message.count("\n") == 1  # one line
