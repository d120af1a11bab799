"""Whether two texts say the same thing, word for word: what `refresh` requires before it
folds one record into another.

A close vector is not enough: "Never let import-worker call metrics-agent" is at cosine 0.97
of "Always let import-worker call metrics-agent" and at 0.98 of "Never let metrics-agent call
import-worker" (the local model), and each says the opposite. Two texts are the same when
their words are near-identical (a token-level similarity ratio) and they carry the same
negations, the same qualifiers (always, only, must, at least...), the same numbers and the
same named things (import-worker, api/v2, RetryPolicy) in the same order.

`restatement` is that decision for two records, made the same way wherever it is asked: the
duplicate guard refusing a write, an import or an adoption comparing its new records, and
`refresh` merging.
"""

import re
from difflib import SequenceMatcher

from msgspec import Struct

from contextd.models import Record
from contextd.storage.records import search_text

__all__ = ["TextMatch", "compare_texts", "record_words", "restatement"]

_TOKEN = re.compile(r"\w(?:[\w'\-./:]*\w)?")
_NAMED = re.compile(r"[\-_./:]|\d|[a-z][A-Z]")
_NUMBER = re.compile(r"^\d+(?:[.,]\d+)*$")
_NEGATIONS = frozenset(
    "not no never none nothing nobody nowhere nor neither without cannot can't don't doesn't "
    "didn't isn't aren't wasn't weren't won't wouldn't shouldn't mustn't shan't haven't "
    "hasn't hadn't couldn't avoid avoids forbid forbids forbidden disallow disallowed "
    "disable disabled deny denied prohibit prohibited stop skip".split()
)
_QUALIFIERS = frozenset(
    "always only must should may might can could all every each any some most least more "
    "less fewer except unless until before after above below over under first last "
    "enable enabled allow allowed require required optional directly".split()
)
_NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve twenty thirty "
    "forty fifty sixty seventy eighty ninety hundred thousand million billion once twice "
    "thrice half double triple dozen".split()
)


class TextMatch(Struct, frozen=True):
    ratio: float  # 0..1, the words' similarity (difflib's ratio over tokens)
    differs: str | None  # what differs in meaning ("negation", "numbers"...), or None


def compare_texts(first: str, second: str) -> TextMatch:
    """How alike two texts' words are, and the first difference in meaning found."""
    a, b = _tokens(first), _tokens(second)
    ratio = SequenceMatcher(None, [t for t, _ in a], [t for t, _ in b], autojunk=False).ratio()
    return TextMatch(round(ratio, 3), _difference(a, b))


def record_words(record: Record) -> str:
    """What a record says, as the words compared: its title and its body's text."""
    return f"{record.title}\n{search_text(record)}"


def restatement(first: Record, second: Record, min_ratio: float) -> TextMatch | None:
    """How the words of two records match when one restates the other (at least `min_ratio`
    alike, no difference in meaning), else None."""
    match = compare_texts(record_words(first), record_words(second))
    return match if match.differs is None and match.ratio >= min_ratio else None


def _tokens(text: str) -> list[tuple[str, bool]]:
    """The words, folded, each with whether it names a thing (a path, an identifier)."""
    found = _TOKEN.findall(text.replace("\u2019", "'"))
    return [(word.casefold(), bool(_NAMED.search(word))) for word in found]


def _difference(a: list[tuple[str, bool]], b: list[tuple[str, bool]]) -> str | None:
    names = {word for word, named in (*a, *b) if named}  # named in either text, in any case
    checks = (
        ("negation", lambda word: word in _NEGATIONS or word.endswith("n't")),
        ("qualifier", lambda word: word in _QUALIFIERS),
        ("numbers", lambda word: bool(_NUMBER.match(word)) or word in _NUMBER_WORDS),
        ("named things", lambda word: word in names),
    )
    for name, keep in checks:
        if [w for w, _ in a if keep(w)] != [w for w, _ in b if keep(w)]:
            return name
    return None
