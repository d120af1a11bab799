"""The record file format: every kind survives a write and a read unchanged, the bytes are
the same every time, and a broken file is refused with its reason."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from contextd.models import (
    CheckpointBody,
    ConstraintBody,
    DecisionBody,
    Hardness,
    Kind,
    MemoryBody,
    Origin,
    PipelineBody,
    Record,
    Status,
)
from contextd.share.format import FormatError, parse_record, render_record

STAMP = "2026-11-30T10:00:00.000Z"


def _record(kind: Kind, body: object, **changes: object) -> Record:
    base = Record(
        id="01a23228-125e-7134-b84a-e2773e54a0a9",
        project_id=None,
        kind=kind,
        title="Use NATS JetStream for the task queue",
        body=body,  # type: ignore[arg-type]
        category="convention" if kind is Kind.MEMORY else None,
        tags=("queue", "nats"),
        retrieval_hints=("message broker",),
        origin=Origin.AGENT,
        priority=4,
        status=Status.ACTIVE,
        superseded_by=None,
        related_to=("01a23228-153a-7506-b5c6-16015c8540ac",),
        session_id=None,
        created_at=STAMP,
        updated_at=STAMP,
        verified_at=STAMP,
    )
    return replace(base, **changes)


RECORDS = [
    _record(Kind.MEMORY, MemoryBody()),
    _record(
        Kind.DECISION,
        DecisionBody("Redis dropped tasks\n\n## Problem\nat deploys", "Acks and replay", "Kafka"),
        status=Status.SUPERSEDED,
        superseded_by="01a23228-153a-7506-b5c6-16015c8540ac",
    ),
    _record(
        Kind.CONSTRAINT,
        ConstraintBody("Checksummed in production", Hardness.ABSOLUTE, ("migrations/**",), "x"),
        status=Status.ARCHIVED,
        archived_reason="the migrations moved to another repository",
    ),
    _record(Kind.PIPELINE, PipelineBody("Ship safely", ("run tests", "tag vX.Y.Z", "deploy"))),
    _record(
        Kind.CHECKPOINT, CheckpointBody("Lease GPUs", ("heartbeat",), ("leases",), "reconnect")
    ),
]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: str(r.kind))
def test_every_kind_survives_a_write_and_a_read(record: Record) -> None:
    text = render_record(record)
    assert parse_record(text) == record
    assert render_record(parse_record(text)) == text  # deterministic bytes
    assert text.startswith("+++\nid = ") and text.endswith("\n")


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=300), st.text(min_size=1, max_size=300))
def test_any_text_survives(problem: str, why: str) -> None:
    record = _record(Kind.DECISION, DecisionBody(problem.strip() or "p", why.strip() or "w"))
    parsed = parse_record(render_record(record))
    body = parsed.body
    assert isinstance(body, DecisionBody)
    assert (
        body.problem
        == "\n".join(
            line
            for line in record.body.problem.splitlines()  # type: ignore[union-attr]
        ).strip()
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no front matter\n", "does not start with a +++"),
        ("+++\nid = 1\n", "no closing +++"),
        ("+++\nid = [\n+++\n", "not valid TOML"),
        ('+++\nkind = "essay"\n+++\n', "'kind' is not one of"),
        ('+++\nkind = "memory"\n+++\n', "'id' is missing"),
        ('+++\nkind = "decision"\n+++\n', "body is incomplete"),
        ("<<<<<<< HEAD\n+++\n=======\n+++\n>>>>>>> theirs\n", "conflict markers"),
        ('+++\nkind = "pipeline"\npurpose = "p"\n+++\n\n## Steps\n\nnot an item\n', "list item"),
        ('+++\nkind = "memory"\n+++\nstray text\n', "text before its first section"),
    ],
)
def test_a_broken_file_is_refused_with_its_reason(text: str, reason: str) -> None:
    with pytest.raises(FormatError, match=reason.replace("+", r"\+").replace("[", r"\[")):
        parse_record(text)
