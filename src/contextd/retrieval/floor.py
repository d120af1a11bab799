"""When nothing in the store fits a query: say nothing. An answer speaks when its best record
is near enough in meaning (the best cosine) or holds enough of the query's words (the full-text
coverage); below both, search, recall and get_context answer "No matches" and the prompt hook
injects nothing.

The floor is learnt for one model (benchmarks/tune_silence.py, benchmarks/results/silence.md):
on the five development sets a cosine of 0.24 or a coverage of 0.7 kept 98.6% of the answers
found in the top five (each set 94% or more) and kept 91.5% of off-topic prompts silent. Another
provider's cosines are on another scale, so no floor is applied to its answers, nor to an answer
by full text alone.
"""

from msgspec import Struct

__all__ = ["Floor", "floor_for"]


class Floor(Struct, frozen=True):
    cosine: float
    coverage: float

    def silences(self, best_cosine: float, coverage: float) -> bool:
        """Whether an answer whose best cosine and full-text coverage are these says nothing."""
        return best_cosine < self.cosine and coverage < self.coverage


# Learnt per embedding model (its provider id, without a precision suffix).
_LEARNT = {"local:all-MiniLM-L6-v2": Floor(cosine=0.24, coverage=0.7)}


def floor_for(provider_id: str) -> Floor | None:
    """The floor learnt for a provider's model (int8 or fp32 alike), or None."""
    model = ":".join(provider_id.split(":")[:2])
    return _LEARNT.get(model)
