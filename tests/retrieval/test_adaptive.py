"""Adaptive fusion: each arm counts by how decisive its evidence is for this query."""

import math

from hypothesis import given
from hypothesis import strategies as st

from contextd.config import SearchSettings
from contextd.retrieval.adaptive import adaptive_terms, lexical_trust

WEIGHTS = SearchSettings()
# Five candidates: "word" matches the query's words best, "meaning" is clearly nearest in
# meaning; the rest are background.
LEXICAL = {"word": 12.0, "meaning": 3.0, "r1": 2.5, "r2": 2.0}
COSINES = {"word": 0.30, "meaning": 0.62, "r1": 0.28, "r2": 0.27, "r3": 0.25, "r4": 0.24}


def _ranked(coverage: float) -> list[str]:
    fts, sem = adaptive_terms(LEXICAL, coverage, COSINES, WEIGHTS)
    total = {rid: fts.get(rid, 0.0) + sem.get(rid, 0.0) for rid in fts.keys() | sem.keys()}
    return sorted(total, key=lambda rid: total[rid], reverse=True)


def test_a_best_match_holding_the_whole_query_is_trusted_over_meaning() -> None:
    assert _ranked(coverage=0.9)[0] == "word"


def test_a_best_match_sharing_only_a_common_word_leaves_the_order_to_meaning() -> None:
    assert _ranked(coverage=0.05)[0] == "meaning"


def test_trust_in_full_text_is_even_at_the_midpoint_and_grows_with_coverage() -> None:
    assert math.isclose(lexical_trust(WEIGHTS.coverage_midpoint, WEIGHTS), 0.5)
    values = [lexical_trust(c / 10, WEIGHTS) for c in range(11)]
    assert values == sorted(values)
    assert values[0] < 0.1 and values[-1] > 0.99


def test_the_semantic_arm_keeps_its_floor_share_when_full_text_is_decisive() -> None:
    _, decisive = adaptive_terms(LEXICAL, 1.0, COSINES, WEIGHTS)
    _, alone = adaptive_terms({}, 0.0, COSINES, WEIGHTS)
    assert math.isclose(decisive["meaning"] / alone["meaning"], WEIGHTS.semantic_share, rel_tol=0.1)
    assert decisive["r4"] == 0.0  # below the pool's mean: no semantic weight at all


def test_cosines_at_or_under_the_floor_give_no_semantic_term() -> None:
    low = {"a": 0.9, "b": 0.1, "c": 0.12, "d": 0.11}
    _, sem = adaptive_terms({}, 0.0, low, WEIGHTS)
    assert set(sem) == {"a"}


def test_nothing_in_gives_nothing_out() -> None:
    assert adaptive_terms({}, 0.0, {}, WEIGHTS) == ({}, {})


scores = st.dictionaries(
    st.sampled_from("abcdefgh"), st.floats(0.01, 50, allow_nan=False), max_size=8
)
cosines = st.dictionaries(st.sampled_from("abcdefgh"), st.floats(-1, 1, allow_nan=False))


@given(scores, st.floats(0, 1), cosines)
def test_terms_stay_in_zero_to_one_and_keep_each_arms_order(
    lexical: dict[str, float], coverage: float, cos: dict[str, float]
) -> None:
    fts, sem = adaptive_terms(lexical, coverage, cos, WEIGHTS)
    assert fts.keys() == lexical.keys()
    assert all(0.0 <= v <= 1.0 for v in (*fts.values(), *sem.values()))
    for a in lexical:
        for b in lexical:
            if lexical[a] > lexical[b]:
                assert fts[a] >= fts[b]
