"""The ranking formula: weighted terms summed, then multiplied by the record's status factor."""

import math
from datetime import datetime
from typing import Protocol

from contextd.clock import parse_instant
from contextd.config import SearchSettings
from contextd.models import Origin, Reach, ScoreTerms, Status

__all__ = ["ARCHIVED_FACTOR", "score_record"]

_TRUST = {Origin.USER: 1.0, Origin.AGENT: 0.5, Origin.IMPORT: 0.0}
ARCHIVED_FACTOR = 0.2


class Scorable(Protocol):
    """What the formula reads of a record (a full Record or a storage RecordHead)."""

    @property
    def project_id(self) -> str | None: ...
    @property
    def status(self) -> Status: ...
    @property
    def priority(self) -> int: ...
    @property
    def origin(self) -> Origin: ...
    @property
    def verified_at(self) -> str: ...


def score_record(
    record: Scorable,
    *,
    fts: float,
    semantic: float,
    reach: Reach,
    weights: SearchSettings,
    moment: datetime,
    feedback: float = 0.0,
    match_share: float = 1.0,
) -> ScoreTerms:
    """Score one candidate; `fts` and `semantic` are its text and meaning match, each 0..1.

    `reach` says whose records the asking project sees: its own rank first, then its
    group's, then the global ones (the project term). `match_share` (0..1) is how well it
    matches beside the query's best match; the priors (priority, recency, project, trust)
    count in that proportion, so they order records that match alike and never lift a faint
    match over a strong one.
    """
    share = min(max(match_share, 0.0), 1.0)
    age_days = max(0.0, (moment - parse_instant(record.verified_at)).total_seconds() / 86400)
    half_life = max(weights.recency_half_life_days, 1e-6)
    return ScoreTerms(
        fts=weights.fts_weight * fts,
        semantic=weights.semantic_weight * semantic,
        priority=share * weights.priority_weight * (min(max(record.priority, 1), 5) - 1) / 4,
        recency=share * weights.recency_weight * math.pow(0.5, age_days / half_life),
        project_match=share
        * weights.project_weight
        * _tier_match(reach.tier(record.project_id), weights),
        trust=share * weights.trust_weight * _TRUST[record.origin],
        feedback=weights.feedback_weight * feedback,
        status_multiplier=_status_factor(record.status, weights),
    )


def _tier_match(tier: str | None, weights: SearchSettings) -> float:
    if tier == "project":
        return 1.0
    return weights.group_match if tier == "group" else 0.0


def _status_factor(status: Status, weights: SearchSettings) -> float:
    if status is Status.SUPERSEDED:
        return weights.superseded_penalty
    if status is Status.ARCHIVED:
        return ARCHIVED_FACTOR
    return 1.0
