"""A record's heading (its title, or a document's first line) counts above the same words
deep in its text."""

from pathlib import Path

import pytest
from msgspec.structs import replace

from contextd.app import App, open_app
from contextd.config import load_settings
from contextd.models import Kind, MemoryBody, RecordDraft, SearchQuery
from contextd.retrieval.heading import heading_of, heading_shares

ITERATIVE = (
    "39. Data migration: iterative approach\n\n## Context\n\nWe migrate the audit reports in "
    "small batches. Each migration run takes the reports that failed the last run and tries "
    "them again, and we record what each run did."
)
CHANGE_RECORD = (
    "38. Data Migration Change Record\n\n## Context\n\nA table keeps one row for each of the "
    "reports a migration run moved or failed to move, with the agency, the form and the year."
)
OTHERS = [
    f"{n}. {subject}\n\n## Context\n\nThe {subject.lower()} of the audit service {fact}."
    for n, (subject, fact) in enumerate(
        [
            ("Login sessions", "expire after thirty days"),
            ("Static pages", "are cached at the edge"),
            ("Error pages", "use the brand palette"),
            ("Search indexing", "runs every night"),
            ("Email templates", "are written in plain English"),
            ("Backups", "are kept in two regions"),
        ],
        start=1,
    )
]


@pytest.mark.parametrize(
    ("kind", "title", "heading"),
    [
        (
            Kind.DECISION,
            "Use Redis Streams for the task queue",
            "Use Redis Streams for the task queue",
        ),
        (
            Kind.MEMORY,
            "27. Ajax for Dynamic Content\n\n## Context\n\nWe...",
            "27. Ajax for Dynamic Content",
        ),
        (
            Kind.MEMORY,
            "# Cluster authentication\nWe use GitHub as the identity provider.",
            "Cluster authentication",
        ),
        (Kind.MEMORY, "The task queue retries a job three times", None),
        (Kind.MEMORY, "Here are the dev commands:\n\n    make run", None),
        (Kind.MEMORY, "Done. The move is complete.\n\n- removed alembic", None),
        (Kind.MEMORY, "Maria: That sounds tough\n [shared an image]", None),
        (Kind.MEMORY, "x" * 121 + "\n\nrest", None),
        (Kind.MEMORY, "#\n\nrest", None),
    ],
)
def test_a_heading_is_a_title_or_a_first_line_that_reads_as_one(
    kind: Kind, title: str, heading: str | None
) -> None:
    assert heading_of(kind, title) == heading


def test_heading_share_weighs_words_by_rarity_and_matches_as_full_text_does() -> None:
    rarity = {"migrated": 3.0, "records": 1.0}
    shares = heading_shares(
        rarity,
        {
            "both": ("memory", "Migration records\n\nbody"),  # the same stems: migrat, record
            "rare": ("memory", "What we migrate\n\nbody"),
            "common": ("decision", "Records we keep"),
            "none": ("decision", "Something else"),
            "one-line": ("memory", "migrated records"),  # no heading: its text is its body
        },
    )
    assert shares == {"both": 1.0, "rare": 0.75, "common": 0.25}


def _ranked(app: App, query: str) -> list[str]:
    project = app.projects.ensure("fac")
    hits = app.search.search(project, SearchQuery(text=query)).hits
    return [h.record.title.split("\n", 1)[0] for h in hits]


@pytest.mark.parametrize("ranking", ["hybrid", "fts"])
def test_the_record_named_for_the_question_beats_a_long_sibling_that_mentions_it_more(
    home: Path, ranking: str
) -> None:
    settings = load_settings(home=home)
    query = "How do we record which reports failed in each migration run?"
    order = {}
    for weight in (0.0, settings.search.heading_weight):
        search = replace(settings.search, heading_weight=weight, ranking=ranking)
        with open_app(replace(settings, search=search)) as app:
            if weight == 0.0:
                drafts = [
                    RecordDraft(kind=Kind.MEMORY, title=text, body=MemoryBody(), category="adr")
                    for text in (ITERATIVE, CHANGE_RECORD, *OTHERS)
                ]
                app.writer.create_many(drafts, app.projects.ensure("fac"), force=True)
            order[weight] = _ranked(app, query)
    assert order[0.0][0] == "39. Data migration: iterative approach"  # without headings
    assert order[settings.search.heading_weight][:2] == [
        "38. Data Migration Change Record",
        "39. Data migration: iterative approach",
    ]
