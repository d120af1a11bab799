"""The 'likely replaces' flag: a change cue in what the new record states, nothing else."""

import itertools

import pytest

from contextd.core.writing.replacement import replacement_reason
from contextd.models import (
    Body,
    ConstraintBody,
    DecisionBody,
    Hardness,
    Kind,
    MemoryBody,
    Origin,
    Record,
    Status,
)

_ids = itertools.count()


def _record(title: str, body: Body | None = None, status: Status = Status.ACTIVE) -> Record:
    kind = {
        DecisionBody: Kind.DECISION,
        ConstraintBody: Kind.CONSTRAINT,
    }.get(type(body), Kind.MEMORY)
    return Record(
        f"r{next(_ids)}",
        "p",
        kind,
        title,
        body or MemoryBody(),
        "architecture" if kind is Kind.MEMORY else None,
        (),
        (),
        Origin.USER,
        3,
        status,
        None,
        (),
        None,
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:00.000Z",
    )


NOTE = _record("GPU scheduler uses NATS for task transport")


def test_the_quick_starts_decision_does_not_replace_the_note_it_agrees_with() -> None:
    # "dropped" is in the problem, which tells what went wrong, not what changed.
    decision = _record(
        "Use NATS JetStream for the task queue",
        DecisionBody(
            problem="Redis pub/sub dropped tasks whenever workers reconnected during a deploy",
            why_chosen="JetStream keeps durable consumers with acks and replay",
            what_we_tried="Redis streams; dropped them after a week",
        ),
    )
    assert replacement_reason(decision, NOTE) is None


@pytest.mark.parametrize(
    ("title", "phrase"),
    [
        ("Work dispatch moved to NATS JetStream", "moved to"),
        ("Moved CI from Travis to CircleCI after the minutes cap", "Moved CI from Travis to"),
        ("CircleCI retired; pipelines are GitHub Actions", "retired"),
        ("Alembic replaced by Atlas with a declarative schema", "replaced"),
        ("Bumped the bcrypt cost to 12", "Bumped"),
        ("Python 3.12 is now the floor for every service", "is now"),
        ("New tables use UUIDv7 keys instead of v4", "instead of"),
    ],
)
def test_a_change_cue_in_the_title_names_the_change(title: str, phrase: str) -> None:
    assert replacement_reason(_record(title), NOTE) == f"it says \u201c{phrase}\u201d"


def test_a_decisions_why_and_a_constraints_reason_can_carry_the_cue() -> None:
    decision = _record(
        "Queue on PostgreSQL",
        DecisionBody(problem="p" * 40, why_chosen="We no longer run a broker at all"),
    )
    constraint = _record(
        "Sign-in needs a passkey",
        ConstraintBody(
            reason="SMS codes were retired after the SIM-swap", hardness=Hardness.STRONG
        ),
    )
    assert replacement_reason(decision, NOTE) == "it says \u201cno longer\u201d"
    assert replacement_reason(constraint, NOTE) == "it says \u201cretired\u201d"


def test_other_technologies_named_without_a_cue_are_not_a_replacement() -> None:
    old = _record("Background jobs go through RQ on Redis")
    assert replacement_reason(_record("The nightly batch is a Kubernetes CronJob"), old) is None


def test_only_an_active_record_other_than_itself_can_be_replaced() -> None:
    new = _record("Work dispatch moved to NATS JetStream")
    gone = _record("Work dispatch on RQ", status=Status.SUPERSEDED)
    assert replacement_reason(new, gone) is None
    assert replacement_reason(new, new) is None


def test_a_long_cue_is_shown_clipped() -> None:
    new = _record("Rolled the billing API server back from Bun to Node 22")
    reason = replacement_reason(new, NOTE)
    assert reason is not None and len(reason) <= 52
