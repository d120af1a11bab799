"""Fitting passages into a token budget: one rule for recall, the briefing and the prompt hook."""

import math
from collections.abc import Iterable
from typing import TypeVar

__all__ = ["SEPARATOR", "estimate_tokens", "pack"]

SEPARATOR = "\n\n"  # between two passages
T = TypeVar("T")


def estimate_tokens(text: str) -> int:
    """About four characters a token for English prose and code (no tokenizer needed)."""
    return tokens_for(len(text))


def tokens_for(characters: int) -> int:
    return max(1, math.ceil(characters / 4))


def pack(
    candidates: Iterable[tuple[T, str]], budget: int, reserved: int = 0, most: int | None = None
) -> tuple[list[T], list[str]]:
    """The candidates, best first, whose blocks fit in `budget` tokens joined by SEPARATOR
    beside `reserved` characters (the fence, a header): one that does not fit is skipped and
    shorter ones after it may still go in; at most `most` of them."""
    chosen: list[T] = []
    blocks: list[str] = []
    length = reserved
    for item, block in candidates:
        if most is not None and len(chosen) >= most:
            break
        grown = length + (len(SEPARATOR) if blocks else 0) + len(block)
        if tokens_for(grown) > budget:
            continue
        chosen.append(item)
        blocks.append(block)
        length = grown
    return chosen, blocks
