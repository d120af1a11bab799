"""Pure ranking pieces: scaling raw match scores to 0..1, and MMR diversity."""

import math
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from contextd.retrieval.fusion import mmr, scale_by_best, scale_by_spread

finite = st.floats(allow_nan=False, allow_infinity=False)


def test_scale_by_best_gives_the_best_match_one_and_the_rest_their_share() -> None:
    scaled = scale_by_best({"a": 8.0, "b": 4.0, "c": 2.0})
    assert scaled == {"a": 1.0, "b": 0.5, "c": 0.25}


def test_scale_by_best_turns_all_zero_or_negative_scores_into_zero() -> None:
    assert scale_by_best({"a": 0.0, "b": 0.0}) == {"a": 0.0, "b": 0.0}
    assert scale_by_best({"a": -3.0, "b": -1.0}) == {"a": 0.0, "b": 0.0}


def test_scale_by_best_clips_negative_scores_beside_a_positive_best_to_zero() -> None:
    assert scale_by_best({"a": 2.0, "b": -5.0}) == {"a": 1.0, "b": 0.0}


def test_scale_by_best_of_nothing_is_nothing() -> None:
    assert scale_by_best({}) == {}


@given(st.dictionaries(st.text(max_size=4), finite, max_size=20))
def test_scale_by_best_always_lands_in_zero_to_one(raw: dict[str, float]) -> None:
    scaled = scale_by_best(raw)
    assert scaled.keys() == raw.keys()
    assert all(0.0 <= value <= 1.0 for value in scaled.values())
    if raw and max(raw.values()) > 0:
        assert max(scaled.values()) == 1.0


def test_scale_by_spread_counts_standard_deviations_above_the_mean() -> None:
    # mean 1, standard deviation 2: "top" stands 2 deviations above it, "low" below
    raw = {"top": 5.0, "low": -3.0} | {f"r{i}": 1.0 for i in range(6)}
    scaled = scale_by_spread(raw, 4.0)
    assert math.isclose(scaled["top"], 0.5)
    assert scaled["low"] == scaled["r0"] == 0.0


def test_scale_by_spread_gives_no_strong_term_when_nothing_stands_out() -> None:
    even = scale_by_spread({f"r{i}": 10.0 + 0.01 * i for i in range(20)}, 4.0)
    assert max(even.values()) < 0.5  # scale_by_best would call the best a full match


def test_scale_by_spread_falls_back_to_the_best_for_tiny_or_flat_pools() -> None:
    assert scale_by_spread({"a": 4.0, "b": 2.0}, 4.0) == {"a": 1.0, "b": 0.5}
    assert scale_by_spread({"a": 3.0, "b": 3.0, "c": 3.0}, 4.0) == {"a": 1.0, "b": 1.0, "c": 1.0}
    assert scale_by_spread({}, 4.0) == {}


@given(
    st.dictionaries(st.text(max_size=4), st.floats(-1e6, 1e6), max_size=30), st.floats(0.5, 10.0)
)
def test_scale_by_spread_is_bounded_and_monotone(raw: dict[str, float], spread: float) -> None:
    scaled = scale_by_spread(raw, spread)
    assert scaled.keys() == raw.keys()
    assert all(0.0 <= value <= 1.0 for value in scaled.values())
    for a in raw:
        for b in raw:
            if raw[a] > raw[b]:
                assert scaled[a] >= scaled[b]


def test_mmr_returns_the_limit_without_repeating_an_item() -> None:
    items = ["a", "b", "c", "d", "e"]
    picked = mmr(items, lambda i: float(ord(i)), lambda x, y: 0.5, limit=3)
    assert len(picked) == 3
    assert len(set(picked)) == 3
    assert set(picked) <= set(items)


def test_mmr_returns_everything_when_the_limit_exceeds_the_items() -> None:
    picked = mmr(["a", "b"], lambda i: 1.0, lambda x, y: 0.0, limit=10)
    assert sorted(picked) == ["a", "b"]


def test_mmr_with_full_balance_is_plain_relevance_order() -> None:
    scores = {"a": 0.2, "b": 0.9, "c": 0.5, "d": 0.7}
    picked = mmr(list(scores), scores.__getitem__, lambda x, y: 1.0, limit=4, balance=1.0)
    assert picked == ["b", "d", "c", "a"]


def test_mmr_picks_a_diverse_item_second_over_a_near_duplicate_of_the_first() -> None:
    scores = {"deploy": 1.0, "deploy-again": 0.95, "billing": 0.8}

    def similarity(x: str, y: str) -> float:
        return 1.0 if x.startswith("deploy") and y.startswith("deploy") else 0.0

    picked = mmr(list(scores), scores.__getitem__, similarity, limit=3, balance=0.7)
    assert picked == ["deploy", "billing", "deploy-again"]


@given(
    st.lists(st.integers(min_value=0, max_value=20), max_size=15),
    st.integers(min_value=0, max_value=20),
    st.floats(min_value=0.0, max_value=1.0),
)
def test_mmr_output_is_a_subset_of_the_input_in_some_order(
    items: list[int], limit: int, balance: float
) -> None:
    picked = mmr(
        items,
        lambda i: (i * 7 % 11) / 11,
        lambda x, y: 1.0 - abs(x - y) / 20,
        limit,
        balance,
    )
    assert len(picked) == min(limit, len(items))
    assert not Counter(picked) - Counter(items)
