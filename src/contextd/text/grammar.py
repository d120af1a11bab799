"""Small pieces of English every message shares: a count with its noun in the right number,
and the "did you mean" for a mistyped name. The standard library only."""

import difflib
from collections.abc import Iterable

__all__ = ["counted", "did_you_mean"]


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """`1 note`, `2 notes`, `0 notes` (`plural` for nouns that do not just take an s)."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def did_you_mean(word: str, names: Iterable[str]) -> str:
    """` Did you mean 'search'?` (with a leading space) for the names closest to `word`, or ''
    when none is close."""
    close = difflib.get_close_matches(word, list(names), n=3, cutoff=0.6)
    if not close:
        return ""
    quoted = [f"'{name}'" for name in close]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f" Did you mean {listed}?"
