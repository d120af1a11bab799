"""Rendering records as Markdown and reading them back gives the same records."""

from contextd.mirror.parse import parse_file, section_draft
from contextd.mirror.render import render_folder
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


def _record(n: int, kind: Kind, title: str, body: object, **extra: object) -> Record:
    values: dict[str, object] = {
        "category": None,
        "tags": (),
        "retrieval_hints": (),
        "priority": 3,
    } | extra
    return Record(
        id=f"01a22800-0000-7000-8000-00000000000{n}",
        project_id="p",
        kind=kind,
        title=title,
        body=body,  # type: ignore[arg-type]
        origin=Origin.USER,
        status=Status.ACTIVE,
        superseded_by=None,
        related_to=(),
        session_id=None,
        created_at=f"2026-01-0{n}T00:00:00.000Z",
        updated_at="2026-01-01T00:00:00.000Z",
        verified_at="2026-01-01T00:00:00.000Z",
        **values,  # type: ignore[arg-type]
    )


RECORDS = [
    _record(
        1,
        Kind.DECISION,
        "Use NATS for the queue",
        DecisionBody(
            "Redis pub/sub dropped tasks when workers reconnected",
            "JetStream keeps durable consumers\n\nwith acks and replay",
            alternatives="Redis streams, Kafka",
        ),
        tags=("queue", "infra"),
    ),
    _record(
        2,
        Kind.CONSTRAINT,
        "Never edit an applied migration",
        ConstraintBody("Checksums break", Hardness.ABSOLUTE, ("migrations/**", "db/{a,b}.sql")),
        retrieval_hints=("alembic checksum mismatch", "schema drift, prod"),
    ),
    _record(
        3,
        Kind.MEMORY,
        "Build with:\n```sh\nmake all\n### not a heading\n**Tags:** not a label\n```",
        MemoryBody(),
        category="convention",
    ),
    _record(
        4,
        Kind.PIPELINE,
        "Release",
        PipelineBody("Ship a tagged build", ("run tests", "tag vX.Y.Z", "deploy")),
        priority=5,
    ),
    _record(5, Kind.CHECKPOINT, "Heartbeat done", CheckpointBody("GPU", ("a",), ("b", "c"), "x")),
    _record(6, Kind.MEMORY, "Workers talk over NATS", MemoryBody(), category="architecture"),
]


def test_every_kind_survives_a_render_and_parse_round_trip() -> None:
    files = render_folder("orbit", "intro", RECORDS)
    seen = set()
    for name, rendered in files.items():
        for section in parse_file(name, rendered.text):
            record = next(r for r in RECORDS if r.id == section.record_id)
            draft = section_draft(section, record.kind, is_global=False)
            assert (draft.title, draft.body, draft.category) == (
                record.title,
                record.body,
                record.category,
            )
            assert (draft.tags, draft.retrieval_hints, draft.priority) == (
                record.tags,
                record.retrieval_hints,
                record.priority,
            )
            assert section.digest == rendered.sections[record.id]
            seen.add(record.id)
    assert seen == {r.id for r in RECORDS}


def test_a_section_without_a_marker_is_new_and_takes_its_groups_default() -> None:
    text = "# t\n\n## Notes\n\n### Something a person wrote by hand\n\n**Tags:** a, b\n"
    [section] = parse_file("overview.md", text)
    assert section.record_id is None and section.group == "Notes" and section.line == 5
    draft = section_draft(section, Kind.MEMORY, is_global=False)
    assert draft.category == "convention" and draft.tags == ("a", "b")
