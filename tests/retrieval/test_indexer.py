"""What a record's vector is made of: a text the model reads the first 128 word pieces of."""

import pytest

from contextd.app import App
from contextd.models import Kind, MemoryBody, RecordDraft
from contextd.retrieval.indexer import embedding_text

# A context long enough that, read first, it would fill the model's 128 word pieces alone.
CONTEXT = (
    "The platform review found that the services of the programme run on a mix of hosting, "
    "that the teams repeat the same set-up work, that incidents take long to diagnose, that "
    "costs are hard to attribute to a team, and that nobody owns the shared components. "
) * 3


def _adr(number: int, decision: str) -> str:
    return (
        f"ADR{number:03d}: Follow-up to the platform review\n\n## Context\n\n{CONTEXT}\n\n"
        f"## Decision\n\n{decision}\n\n## Consequences\n\nThe teams are told."
    )


def test_an_adr_held_in_one_text_is_led_by_its_headline_and_decision(app: App) -> None:
    draft = RecordDraft(
        Kind.MEMORY, _adr(7, "We will keep records in PostgreSQL."), MemoryBody(), "note"
    )
    record = app.writer.create(draft, app.current_project(), force=True)
    text = embedding_text(record)
    assert text.startswith(
        "ADR007: Follow-up to the platform review\nWe will keep records in PostgreSQL.\nADR007"
    )


def test_a_text_without_a_decision_section_is_read_as_written(app: App) -> None:
    draft = RecordDraft(Kind.MEMORY, "Deploys run at 9:00 on weekdays only.", MemoryBody(), "note")
    record = app.writer.create(draft, app.current_project(), force=True)
    assert embedding_text(record) == "Deploys run at 9:00 on weekdays only.\nnote"


@pytest.mark.usefixtures("local_model")
def test_a_question_finds_the_adr_whose_decision_answers_it_behind_a_long_context(
    app: App,
) -> None:
    """Two ADRs that open alike and decide different things: with the context read first, the
    model could not tell them apart."""
    drafts = [
        RecordDraft(
            Kind.MEMORY,
            _adr(7, "We will keep every service's records in PostgreSQL."),
            MemoryBody(),
            "note",
        ),
        RecordDraft(
            Kind.MEMORY,
            _adr(8, "Each team runs an on-call rota: whoever is on call answers the night pages."),
            MemoryBody(),
            "note",
        ),
    ]
    project = app.current_project()
    stored = app.writer.create_many(drafts, project, force=True)
    assert app.indexer is not None and app.vector_index is not None
    reach = app.reader.reach(project)
    for question, answer in [
        ("which database do the services store data in?", stored[0]),
        ("who responds to alerts out of hours?", stored[1]),
    ]:
        query = app.indexer.provider.embed_query(question)
        assert app.vector_index.search(query, reach, 2)[0][0] == answer.id, question
