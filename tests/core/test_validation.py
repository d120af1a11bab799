"""The per-kind rules, exercised through the core API as the MCP server will call it."""

import pytest

from contextd.app import App
from contextd.errors import InvalidInputError, ValidationError
from contextd.models import (
    ConstraintBody,
    DecisionBody,
    Hardness,
    Kind,
    MemoryBody,
    RecordDraft,
    RecordEdit,
)


def decision(problem: str = "p" * 40, why: str = "w" * 60) -> RecordDraft:
    return RecordDraft(
        Kind.DECISION, "Use NATS for the task queue", DecisionBody(problem=problem, why_chosen=why)
    )


@pytest.mark.parametrize(
    ("draft", "field"),
    [
        (decision(problem="p" * 39), "problem"),
        (decision(why="w" * 59), "why_chosen"),
        (decision(problem="   " + "p" * 38 + "   "), "problem"),
        (RecordDraft(Kind.MEMORY, "Builds need Node 20", MemoryBody()), "category"),
        (
            RecordDraft(
                Kind.MEMORY,
                "Builds need Node 20",
                DecisionBody("p" * 40, "w" * 60),
                category="gotcha",
            ),
            "body",
        ),
        (
            RecordDraft(
                Kind.CONSTRAINT,
                "Never edit applied migrations",
                ConstraintBody(reason="r" * 40, hardness=Hardness.STRONG, scope=("  ",)),
            ),
            "scope",
        ),
        (
            RecordDraft(
                Kind.MEMORY,
                "Builds need Node 20",
                MemoryBody(),
                category="gotcha",
                retrieval_hints=tuple(f"hint {i}" for i in range(9)),
            ),
            "retrieval_hints",
        ),
    ],
)
def test_a_draft_breaking_a_rule_names_the_field(app: App, draft: RecordDraft, field: str) -> None:
    project = app.current_project()
    with pytest.raises(ValidationError) as caught:
        app.writer.create(draft, project)
    assert caught.value.field == field
    assert app.reader.list_records(project) == []


def test_text_is_trimmed_and_tags_normalised(app: App) -> None:
    record = app.writer.create(
        RecordDraft(
            Kind.MEMORY,
            "  Builds need Node 20 or newer \n",
            MemoryBody(),
            category=" Gotcha ",
            tags=("CI Build", "ci-build", "#node"),
        ),
        app.current_project(),
    )
    assert record.title == "Builds need Node 20 or newer"
    assert record.category == "gotcha"
    assert record.tags == ("ci-build", "node")


def test_an_update_with_a_bad_hardness_is_a_validation_error(app: App) -> None:
    record = app.writer.create(
        RecordDraft(
            Kind.CONSTRAINT,
            "Never edit applied migrations",
            ConstraintBody(reason="r" * 40, hardness=Hardness.STRONG),
        ),
        app.current_project(),
    )
    with pytest.raises(ValidationError, match="Hardness must be one of"):
        app.writer.update(record.id, RecordEdit(body={"hardness": "sometimes"}))


def test_a_record_cannot_be_related_to_itself(app: App) -> None:
    record = app.writer.create(decision(), app.current_project())
    with pytest.raises(InvalidInputError, match="itself"):
        app.writer.update(record.id, RecordEdit(related_to=(record.id,)))


def test_a_project_record_without_a_project_is_refused(app: App) -> None:
    with pytest.raises(InvalidInputError, match="needs a project"):
        app.writer.create(decision(), None)
