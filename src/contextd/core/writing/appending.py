"""Adding a later session's text to a record's text: as the next sentence of prose, as the
next line of a list."""

import re

__all__ = ["joined"]

# A line that is an item of a list: `- x`, `* x`, `• x`, `1. x`, `2) x`, `[ ] x`.
_ITEM = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)]|\[[ xX]\])\s+\S")
# Prose that already ends a sentence (a closing quote or bracket may follow the mark).
_ENDED = re.compile(r"[.!?:;\u2026][\"'\u201d\u2019)\]]*$")


def joined(current: str, addition: str) -> str:
    """`addition` after `current`: on a line of its own when either is a list (or `current`
    ends with a line break), else as a new sentence, with a full stop closing `current` when
    it has no closing mark ("…are noisy. Run benchmarks", not "…are noisy Run benchmarks")."""
    before = current.rstrip()
    after = addition.strip()
    if not before:
        return after
    if not after:
        return before
    last_line = before.rsplit("\n", 1)[-1]
    if _ITEM.match(last_line) or _ITEM.match(after):
        return f"{before}\n{after}"
    if _ENDED.search(before):
        return f"{before} {after}"
    return f"{before}. {after}"
