"""Two texts say the same thing only with near-identical words and the same negations,
qualifiers, numbers and named things, in the same order."""

import pytest

from contextd.core.writing.sameness import compare_texts

RULE = "Never let import-worker call metrics-agent"


@pytest.mark.parametrize(
    ("other", "differs"),
    [
        ("Always let import-worker call metrics-agent", "negation"),
        ("Let import-worker call metrics-agent", "negation"),
        ("Never let metrics-agent call import-worker", "named things"),
        ("Never let import-worker call billing-agent", "named things"),
        ("Never let import-worker call metrics-agent directly", "qualifier"),
        ("Never let import-worker call metrics-agent twice", "numbers"),
    ],
)
def test_a_difference_in_meaning_is_named(other: str, differs: str) -> None:
    assert compare_texts(RULE, other).differs == differs


def test_numbers_and_identifiers_must_match() -> None:
    assert compare_texts("Retry 3 times", "Retry 5 times").differs == "numbers"
    assert compare_texts("Use api/v2 for sync", "Use api/v3 for sync").differs == "named things"
    assert compare_texts("RetryPolicy owns it", "Retrypolicy owns it").differs is None


def test_a_rewording_keeps_the_meaning_and_scores_its_words() -> None:
    same = compare_texts(RULE, "never let  import-worker call metrics-agent.")
    assert same.differs is None and same.ratio == 1.0
    near = compare_texts(
        "The task queue retries a failed job three times before it is dead-lettered",
        "The task queue retries a failed job three times before it gets dead-lettered",
    )
    assert near.differs is None and 0.9 < near.ratio < 1.0
    assert compare_texts("Don’t deploy on Fridays", "Don't deploy on Fridays").ratio == 1.0
