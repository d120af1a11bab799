"""A record is a result only on evidence that it matches the query: the priors (priority,
recency, trust, project) order the records that match, they never bring in one that does not."""

import itertools

import pytest

from contextd.app import App
from contextd.models import Kind, MemoryBody, Origin, RecordDraft, SearchQuery
from tests.conftest import Cli

SUBJECTS = (
    "The billing service",
    "Invoices for enterprise customers",
    "The documentation site",
    "Onboarding emails",
    "Login sessions",
    "The mobile app",
    "Search result pages",
    "Feature flags",
    "Database backups",
    "The stylesheet build",
    "Error pages",
    "Audit logs",
)
FACTS = (
    "are rounded to two decimals before they are stored",
    "are written in British English",
    "are reviewed by two people before release",
    "expire after thirty days",
    "are cached for five minutes at the edge",
    "use the brand colour palette",
    "are stored in the Frankfurt region",
    "are checked on every pull request",
    "are owned by the platform team",
    "must pass the accessibility checks",
)
MATCHING = "The task queue retries a job three times before dead-lettering it"


def _unrelated() -> list[str]:
    return [f"{subject} {fact}" for subject, fact in itertools.product(SUBJECTS, FACTS)]


def _store(app: App, texts: list[str]) -> list[str]:
    drafts = [
        RecordDraft(
            kind=Kind.MEMORY,
            title=text,
            body=MemoryBody(),
            category="note",
            priority=5 if n % 2 else 3,  # high priority must not make a record a result
            origin=Origin.USER,
        )
        for n, text in enumerate(texts)
    ]
    records = app.writer.create_many(drafts, app.current_project(), force=True)
    return [r.id for r in records]


@pytest.mark.usefixtures("local_model")
def test_one_matching_record_among_120_unrelated_ones_is_the_only_result(
    app: App, run: Cli
) -> None:
    unrelated = _unrelated()
    assert len(unrelated) == 120
    ids = _store(app, [*unrelated[:60], MATCHING, *unrelated[60:]])
    wanted = ids[60]
    hits = app.search.search(app.current_project(), SearchQuery(text="task queue")).hits
    assert [h.record.id for h in hits] == [wanted]
    results = run.json("search", "task queue")["results"]
    assert [r["id"] for r in results] == [wanted]


def test_with_hashing_vectors_one_matching_record_is_the_only_result(app: App) -> None:
    ids = _store(app, [*_unrelated(), MATCHING])
    hits = app.search.search(app.current_project(), SearchQuery(text="task queue")).hits
    assert [h.record.id for h in hits] == [ids[-1]]


def test_a_paraphrase_with_no_word_in_common_still_finds_its_record_by_meaning(
    app: App,
) -> None:
    """The gate keeps a match by meaning alone when it is a fair share of the best match."""
    ids = _store(app, [*_unrelated()[:30], MATCHING])
    hits = app.search.search(
        app.current_project(), SearchQuery(text="dead-lettering a job after three retries")
    ).hits
    assert hits[0].record.id == ids[-1]


def test_a_query_can_ask_only_for_hits_near_it_in_meaning(app: App) -> None:
    """The prompt hook's cut, as any search may ask for it: a hit whose cosine is under
    `least_similarity` is dropped before the limit, with vectors and without."""
    project = app.current_project()
    near = app.writer.create(
        RecordDraft(Kind.MEMORY, MATCHING, MemoryBody(), category="note"), project, force=True
    )
    for subject, fact in itertools.islice(itertools.product(SUBJECTS, FACTS), 30):
        draft = RecordDraft(Kind.MEMORY, f"{subject} {fact}", MemoryBody(), category="note")
        app.writer.create(draft, project, force=True)
    asked = "how many times does the task queue retry a job"
    every = app.search.search(project, SearchQuery(asked, limit=10)).hits
    assert every[0].record.id == near.id and len(every) > 1
    least = every[0].similarity - 1e-6
    cut = app.search.search(project, SearchQuery(asked, limit=10, least_similarity=least)).hits
    assert [h.record.id for h in cut if not h.linked_from] == [near.id]
    assert app.search.search(project, SearchQuery(asked, least_similarity=1.01)).hits == ()
