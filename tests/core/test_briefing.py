"""The session briefing: what it carries, in what order, and what it counts as left out."""

import pytest

from contextd.app import App
from contextd.core.recall import briefing
from contextd.core.recall.briefing import build_briefing
from contextd.models import ConstraintBody, Hardness, Kind, MemoryBody, RecordDraft

TOPICS = ["billing", "deploys", "queues", "caching", "auth", "search"]


def _notes(app: App, count: int) -> None:
    project = app.current_project()
    drafts = [
        RecordDraft(
            Kind.MEMORY,
            f"The {TOPICS[n]} service keeps its own schema and owns its migrations",
            MemoryBody(),
            category="convention",
        )
        for n in range(count)
    ]
    app.writer.create_many(drafts, project, force=True)


def test_absolute_constraints_lead_and_everything_fits_a_big_budget(app: App) -> None:
    _notes(app, 2)
    rule = app.writer.create(
        RecordDraft(
            Kind.CONSTRAINT,
            "Never edit generated protobuf code by hand",
            ConstraintBody(
                "The generator overwrites every hand edit at the next build", Hardness.ABSOLUTE
            ),
        ),
        app.current_project(),
    )
    made = build_briefing(app.reader, app.current_project(), 5000)
    assert made.included == 3 and made.omitted == 0
    assert made.records[0].id == rule.id
    assert "left out" not in made.text


def test_a_big_store_is_briefed_from_the_newest_of_each_kind_and_the_rest_counted(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(briefing, "CANDIDATES_PER_KIND", 4)
    _notes(app, 6)
    made = build_briefing(app.reader, app.current_project(), 5000)
    assert made.included == 4 and made.omitted == 2
    assert "2 more records left out" in made.text


def test_a_small_budget_counts_what_it_left_out(app: App) -> None:
    _notes(app, 6)
    made = build_briefing(app.reader, app.current_project(), 100)
    assert 0 < made.included < 6
    assert made.omitted == 6 - made.included
    assert len(made.records) == made.included
