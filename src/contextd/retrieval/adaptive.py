"""Fusion that weighs each arm per query by how decisive its evidence is.

The full-text arm is decisive when its best match holds most of what the query says (its
`coverage`: the idf-weighted share of the query's words, so a rare exact term or a name
counts for much and a common word for little). When the best match shares only a word or
two, the query is worded unlike the record it wants, and meaning decides: full text then
only breaks ties. The semantic arm keeps a floor share of its weight either way, so a clear
semantic winner still rises when the words also match elsewhere.

Both arms' raw scores become 0..1 terms inside the query's own pool (bm25 relative to the
best match; cosines as standard deviations above the pool's mean), so no corpus-wide scale
is assumed. Every constant is a setting (`SearchSettings`), chosen by cross-validation on
the eval datasets (docs/benchmarks.md, "Measured").
"""

import math

from contextd.config import SearchSettings
from contextd.retrieval.fusion import scale_by_spread

__all__ = ["adaptive_terms", "lexical_trust"]


def lexical_trust(coverage: float, weights: SearchSettings) -> float:
    """0..1: how far the full-text arm is trusted for a query whose best match has `coverage`."""
    steepness = weights.coverage_steepness * (coverage - weights.coverage_midpoint)
    return 1.0 / (1.0 + math.exp(-max(min(steepness, 60.0), -60.0)))


def adaptive_terms(
    lexical: dict[str, float],
    coverage: float,
    cosines: dict[str, float],
    weights: SearchSettings,
) -> tuple[dict[str, float], dict[str, float]]:
    """The full-text and semantic terms (each 0..1 before the arm weights) of every candidate.

    `lexical` is bm25 relevance by record, `coverage` how much of the query its best match
    holds, `cosines` the cosine of each candidate with the query.
    """
    trust = lexical_trust(coverage, weights)
    best = max(lexical.values(), default=0.0)
    fts: dict[str, float] = {}
    if best > 0:
        scale = trust * coverage**weights.coverage_exponent
        fts = {
            rid: scale * (max(score, 0.0) / best) ** weights.bm25_exponent
            for rid, score in lexical.items()
        }
    share = weights.semantic_share
    scale = share + (1.0 - share) * (1.0 - trust)
    spread = scale_by_spread(cosines, weights.semantic_spread)
    floor = weights.semantic_floor
    sem = {rid: scale * value for rid, value in spread.items() if cosines[rid] > floor}
    return fts, sem
