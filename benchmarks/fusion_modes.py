"""The fixed fusions adaptive fusion was chosen over, kept to compare against it.

contextd ships one fusion (contextd.retrieval.adaptive: each arm weighed per query by how
decisive its evidence is). These turn the arms' raw scores into terms in a fixed way; a
benchmark swaps one in with `use(name)` and ranks through the real recall path:

- zscore: each arm as standard deviations above its pool's mean, over SPREAD;
- rrf: reciprocal rank fusion with constant RRF_K;
- relative: each arm divided by its best;
- saturating: bm25 / (bm25 + BM25_HALF), cosines by their best;
- weighted: bm25 by its best, cosines above the semantic floor as they are.
"""

from collections.abc import Callable

from contextd.config import SearchSettings
from contextd.retrieval.fusion import scale_by_best, scale_by_spread
from contextd.retrieval.search import Retriever

SPREAD = 4.0
RRF_K = 60.0
BM25_HALF = 10.0
Terms = tuple[dict[str, float], dict[str, float]]


def semantic_relevance(cosine: float, floor: float) -> float:
    """A cosine on 0..1: at or below `floor` (unrelated text) counts as no match."""
    if cosine <= floor:
        return 0.0
    return min((cosine - floor) / (1.0 - floor), 1.0)


def scale_by_rank(raw: dict[str, float], k: float) -> dict[str, float]:
    """Reciprocal-rank scores, 1 for the best: (k + 1) / (k + rank)."""
    ordered = sorted(raw, key=lambda key: raw[key], reverse=True)
    return {key: (k + 1) / (k + rank) for rank, key in enumerate(ordered, 1)}


def _fixed(name: str, weights: SearchSettings) -> Callable[..., Terms]:
    def fuse(lexical: dict[str, float], cosines: dict[str, float]) -> Terms:
        meaning = {r: semantic_relevance(c, weights.semantic_floor) for r, c in cosines.items()}
        if name == "zscore":
            spread = scale_by_spread(cosines, SPREAD)
            sem = {r: v for r, v in spread.items() if meaning[r] > 0}
            return scale_by_spread(lexical, SPREAD), sem
        if name == "rrf":
            positive = {r: v for r, v in meaning.items() if v > 0}
            return scale_by_rank(lexical, RRF_K), scale_by_rank(positive, RRF_K)
        if name == "relative":
            return scale_by_best(lexical), scale_by_best(meaning)
        if name == "saturating":
            return {r: b / (b + BM25_HALF) for r, b in lexical.items()}, scale_by_best(meaning)
        return scale_by_best(lexical), meaning  # weighted

    return fuse


NAMES = ("adaptive", "zscore", "rrf", "relative", "saturating", "weighted")


def use(name: str) -> None:
    """Rank with fusion `name` from now on in this process ("adaptive": contextd's own)."""
    if name == "adaptive":
        Retriever._fuse = _ADAPTIVE  # type: ignore[method-assign]
        return

    def fuse(
        self: Retriever, lexical: dict[str, float], coverage: float, cosines: dict[str, float]
    ) -> Terms:
        return _fixed(name, self._weights)(lexical, cosines)

    if name not in NAMES:
        raise ValueError(f"no fusion named {name!r}; one of {', '.join(NAMES)}")
    Retriever._fuse = fuse  # type: ignore[method-assign]


_ADAPTIVE = Retriever._fuse
