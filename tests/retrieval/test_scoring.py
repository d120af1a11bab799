"""The ranking formula of one candidate: weighted terms, summed, times a status factor."""

import math
from datetime import UTC, datetime, timedelta

from msgspec.structs import replace

from contextd.clock import to_iso
from contextd.config import SearchSettings
from contextd.models import Kind, MemoryBody, Origin, Reach, Record, ScoreTerms, Status
from contextd.retrieval.scoring import ARCHIVED_FACTOR, score_record

MOMENT = datetime(2026, 11, 29, 12, tzinfo=UTC)
WEIGHTS = SearchSettings()
PROJECT = "0190aaaa-0000-7000-8000-000000000001"
GROUP = "0190aaaa-0000-7000-8000-0000000000aa"


def _record(**changes: object) -> Record:
    stamp = to_iso(MOMENT)
    base = Record(
        id="0190bbbb-0000-7000-8000-000000000001",
        project_id=PROJECT,
        kind=Kind.MEMORY,
        title="Deploys run through GitHub Actions",
        body=MemoryBody(),
        category="note",
        tags=(),
        retrieval_hints=(),
        origin=Origin.USER,
        priority=3,
        status=Status.ACTIVE,
        superseded_by=None,
        related_to=(),
        session_id=None,
        created_at=stamp,
        updated_at=stamp,
        verified_at=stamp,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def _score(
    record: Record, weights: SearchSettings = WEIGHTS, project_id: str | None = PROJECT
) -> ScoreTerms:
    return score_record(
        record,
        fts=0.8,
        semantic=0.6,
        reach=Reach(project_id, GROUP if project_id else None),
        weights=weights,
        moment=MOMENT,
    )


def _summed(record: Record) -> float:
    terms = _score(record)
    return (
        terms.fts
        + terms.semantic
        + terms.priority
        + terms.recency
        + terms.project_match
        + terms.trust
        + terms.feedback
    )


def test_an_active_records_total_is_the_plain_sum_of_its_terms() -> None:
    record = _record()
    terms = _score(record)
    assert terms.status_multiplier == 1.0
    assert math.isclose(terms.total, _summed(record))


def test_a_superseded_records_total_is_its_sum_times_the_superseded_penalty() -> None:
    record = _record(status=Status.SUPERSEDED, superseded_by="0190cccc")
    terms = _score(record)
    assert terms.status_multiplier == WEIGHTS.superseded_penalty
    assert math.isclose(terms.total, _summed(record) * WEIGHTS.superseded_penalty)


def test_the_superseded_penalty_follows_the_settings() -> None:
    record = _record(status=Status.SUPERSEDED)
    terms = _score(record, weights=replace(WEIGHTS, superseded_penalty=0.1))
    assert terms.status_multiplier == 0.1


def test_an_archived_records_total_is_its_sum_times_two_tenths() -> None:
    record = _record(status=Status.ARCHIVED)
    terms = _score(record)
    assert ARCHIVED_FACTOR == 0.2
    assert math.isclose(terms.total, _summed(record) * 0.2)


def test_a_projects_own_record_beats_an_otherwise_identical_global_one() -> None:
    own = _score(_record())
    shared = _score(_record(project_id=None))
    assert own.total > shared.total
    assert math.isclose(own.total - shared.total, WEIGHTS.project_weight)


def test_no_record_gets_the_project_term_when_no_project_is_asked_for() -> None:
    assert _score(_record(project_id=None), project_id=None).project_match == 0.0
    assert _score(_record(), project_id=None).project_match == 0.0


def test_a_users_record_outranks_an_agents_which_outranks_an_imported_one() -> None:
    user = _score(_record(origin=Origin.USER)).total
    agent = _score(_record(origin=Origin.AGENT)).total
    imported = _score(_record(origin=Origin.IMPORT)).total
    assert user > agent > imported


def test_priority_five_outranks_priority_one() -> None:
    high = _score(_record(priority=5))
    low = _score(_record(priority=1))
    assert high.total > low.total
    assert high.priority == WEIGHTS.priority_weight
    assert low.priority == 0.0


def test_recency_halves_after_one_half_life() -> None:
    fresh = _score(_record()).recency
    then = to_iso(MOMENT - timedelta(days=WEIGHTS.recency_half_life_days))
    aged = _score(_record(verified_at=then)).recency
    twice = to_iso(MOMENT - timedelta(days=2 * WEIGHTS.recency_half_life_days))
    older = _score(_record(verified_at=twice)).recency
    assert math.isclose(fresh, WEIGHTS.recency_weight)
    assert math.isclose(aged, fresh / 2)
    assert math.isclose(older, fresh / 4)


def test_recency_counts_from_the_verified_date_not_the_creation_date() -> None:
    old = to_iso(MOMENT - timedelta(days=400))
    reverified = _score(_record(created_at=old, verified_at=to_iso(MOMENT))).recency
    assert math.isclose(reverified, WEIGHTS.recency_weight)


def test_the_match_terms_are_weighted_by_the_settings() -> None:
    terms = _score(_record())
    assert math.isclose(terms.fts, WEIGHTS.fts_weight * 0.8)
    assert math.isclose(terms.semantic, WEIGHTS.semantic_weight * 0.6)


def test_a_group_record_ranks_between_the_projects_own_and_a_global_one() -> None:
    own = _score(_record())
    grouped = _score(_record(project_id=GROUP))
    shared = _score(_record(project_id=None))
    assert own.total > grouped.total > shared.total
    assert math.isclose(grouped.project_match, WEIGHTS.project_weight * WEIGHTS.group_match)


def test_a_record_of_a_group_the_project_is_not_in_gets_no_project_term() -> None:
    assert _score(_record(project_id="0190other-group")).project_match == 0.0
