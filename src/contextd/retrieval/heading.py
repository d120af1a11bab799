"""How much of a query a record's heading holds.

A heading names what a record is about in a few words, so a query word found there is
stronger evidence than the same word deep in a long text (the reason search engines weigh a
title field above the body). A record's heading is its title when its text is kept apart
(a decision, a constraint...), and for a free memory whose title is a whole document (an
imported ADR: "27. Ajax for Dynamic Content", a blank line, then its sections) the first line
when it reads as one: a Markdown "#" line, or a short line that does not end a sentence or
lead into a list, followed by a blank line. A one-line memory has none: its text is its body.
"""

from contextd.models import Kind
from contextd.storage.fts5_terms import word_terms

__all__ = ["heading_of", "heading_shares"]

_LONGEST = 120  # characters: a longer first line is a sentence, not a heading
_NOT_HEADING_END = (":", ".", ",", ";", "!")


def heading_of(kind: str, title: str) -> str | None:
    """The heading of a record of `kind` with `title`, if it has one."""
    if kind != Kind.MEMORY:
        return title.split("\n", 1)[0]
    first, newline, rest = title.strip().partition("\n")
    if not newline:
        return None
    if first.startswith("#"):
        return first.lstrip("#").strip() or None
    first = first.strip()
    if len(first) <= _LONGEST and rest.startswith("\n") and not first.endswith(_NOT_HEADING_END):
        return first
    return None


def heading_shares(
    rarity: dict[str, float], titles: dict[str, tuple[str, str]]
) -> dict[str, float]:
    """For each record (by id: its kind and title) whose heading holds a query word, the
    share of the query's words it holds, each word weighted by its rarity (`rarity`: query
    word -> idf, as coverage weighs them), matched as full-text search matches words."""
    words = list(rarity)
    wanted = [set(terms) for terms in word_terms(words)]
    total = sum(rarity[w] for w, terms in zip(words, wanted, strict=True) if terms)
    headings = {rid: h for rid, (kind, title) in titles.items() if (h := heading_of(kind, title))}
    if total <= 0 or not headings:
        return {}
    shares = {}
    for rid, held in zip(headings, word_terms(list(headings.values())), strict=True):
        have = set(held)
        found = sum(rarity[w] for w, terms in zip(words, wanted, strict=True) if terms & have)
        if found > 0:
            shares[rid] = found / total
    return shares
