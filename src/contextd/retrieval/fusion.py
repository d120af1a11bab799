"""Pure pieces of ranking: turning raw match scores into 0..1 terms, and MMR diversity."""

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["dot", "mmr", "scale_by_best", "scale_by_spread"]

T = TypeVar("T")


def scale_by_best(raw: dict[str, float]) -> dict[str, float]:
    """Divide by the best value, so the strongest match scores 1 (bm25 has no fixed scale)."""
    best = max(raw.values(), default=0.0)
    if best <= 0:
        return dict.fromkeys(raw, 0.0)
    return {key: max(value, 0.0) / best for key, value in raw.items()}


def scale_by_spread(raw: dict[str, float], spread: float) -> dict[str, float]:
    """How far each value stands above the pool's mean, in standard deviations, over `spread`,
    clipped to 0..1.

    Unlike scaling by the best, a query whose best match is barely better than the rest (a
    common word, a vague question) gives no candidate a strong term. A pool too small or
    too even to have a spread is scaled by its best instead.
    """
    if len(raw) < 3:
        return scale_by_best(raw)
    mean = math.fsum(raw.values()) / len(raw)
    deviation = math.sqrt(math.fsum((v - mean) * (v - mean) for v in raw.values()) / len(raw))
    if not math.isfinite(deviation) or deviation <= 1e-12 * max(abs(mean), 1.0):
        return scale_by_best(raw)
    return {
        key: min(max((value - mean) / deviation / spread, 0.0), 1.0) for key, value in raw.items()
    }


def mmr(
    items: Sequence[T],
    relevance: Callable[[T], float],
    similarity: Callable[[T, T], float],
    limit: int,
    balance: float = 0.7,
) -> list[T]:
    """Maximal marginal relevance: trade relevance against likeness to what is already picked."""
    remaining = list(items)
    picked: list[T] = []
    while remaining and len(picked) < limit:
        best = max(
            remaining,
            key=lambda item: (
                balance * relevance(item)
                - (1 - balance) * max((similarity(item, other) for other in picked), default=0.0)
            ),
        )
        picked.append(best)
        remaining.remove(best)
    return picked


def dot(a: list[float] | None, b: list[float] | None) -> float:
    """The dot product (the cosine of unit vectors); 0 when either vector is missing."""
    if a is None or b is None:
        return 0.0
    return sum(x * y for x, y in zip(a, b, strict=True))
