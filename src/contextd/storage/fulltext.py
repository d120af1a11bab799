"""Full-text candidates, ranked by bm25, with user text made safe to match. The words are
picked here; each backend matches them in its own index (FTS5 in SQLite: sqlite/fulltext.py;
a tsvector of FTS5's own terms in PostgreSQL: postgres/fulltext.py), with the same bm25 and
the same rule for dropping the words most records hold, so both rank alike."""

import math
import re
from abc import ABC, abstractmethod

from msgspec import Struct

from contextd.errors import InvalidQueryError
from contextd.storage.cursor import Executor

__all__ = [
    "COLUMN_WEIGHTS",
    "COMMON_SHARE",
    "MAX_TERMS",
    "SMALL_STORE",
    "STOP_WORDS",
    "FullText",
    "idf",
    "IndexedText",
    "LexicalMatches",
    "query_words",
    "word_variants",
]

MAX_TERMS = 16
# bm25 weights per indexed column: title, body_text, tags, retrieval_hints.
COLUMN_WEIGHTS = (4.0, 1.0, 2.0, 2.0)
SMALL_STORE = 2000  # below this every word is kept: scoring all matches is cheap
COMMON_SHARE = 0.25  # in a larger store, a word more records than this share hold is dropped
# The four texts full-text search indexes, in FTS5's column order: title, body_text, tags
# (their JSON text), retrieval_hints (their JSON text).
IndexedText = tuple[str, str, str, str]

_WORD = re.compile(r"\w+", re.UNICODE)
STOP_WORDS = frozenset(
    """a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers him his how i if in into is it its itself just me more
    most my no nor not of off on once only or other our ours out over own same she should so some
    such than that the their theirs them then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you your
    yours""".split()
)


# "re-platforming" and "replatforming", "front-end" and "frontend": one word written two ways.
_COMPOUND = re.compile(r"(?<![\w-])[^\W\d_]+(?:-[^\W\d_]+){1,2}(?![\w-])")
# A numbered record cited as "ADR-0014", "ADR 14", "adr0014" or "RFC 7807": one term, "adr14".
_REFERENCE = re.compile(r"\b(adr|rfc)[-_ #:]?0*(\d{1,5})\b", re.I)
# Where a camelCase or PascalCase identifier turns to its next word ("setEagerImports",
# "HTTPServer"); FTS5 keeps such a word whole, and splits snake_case itself.
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


class LexicalMatches(Struct, frozen=True):
    """What the full-text index says about one query."""

    hits: list[tuple[str, float]]  # record id, bm25 relevance (> 0), best first
    # How much of the query the best hit contains: the share of the query's words it holds,
    # each word weighted by its rarity (idf). 1: every word, so a rare exact term or name is
    # there; near 0: the record shares only common words, or nothing, with the query.
    coverage: float
    # Each query word's rarity (its idf in the store), for signals that weigh words as
    # coverage does; empty when nothing matched.
    idf: dict[str, float]


class FullText(ABC):
    """One backend's full-text index of the records."""

    @abstractmethod
    def matches(
        self,
        conn: Executor,
        words: list[str],
        scope: tuple[str, list[object]],
        limit: int,
        *,
        narrow: bool = False,
    ) -> LexicalMatches:
        """Records matching any of `words` and the condition `scope` (SQL on the records
        table as `r`, and its parameters), best first, with their bm25 relevance (> 0), and
        how much of the query the best one covers. `narrow`: the condition tests only the
        columns of the index records_seq_scope."""

    def indexed_columns(self, text: IndexedText) -> tuple[tuple[str, str, object], ...]:
        """Extra columns a records row stores for full-text search, each as (name, placeholder,
        value); none where the database indexes the text itself (SQLite's FTS5 triggers)."""
        return ()


def idf(total: int, holding: int) -> float:
    """How rare a word held by `holding` of `total` records is (bm25's idf, never negative)."""
    return math.log(1.0 + (total - holding + 0.5) / (holding + 0.5))


def query_words(text: str) -> list[str]:
    """The words of `text` worth matching: stop words dropped (unless nothing else is left),
    repeats removed; an identifier (`set_eager_imports`, `setEagerImports`, `REL1_36`) both
    whole, which finds it written so, and as its parts, which find it in prose or spelled
    another way; then each cited record as one term and as its bare number ("ADR0014" also
    seeks the "adr14" word_variants indexes and the "14." of the ADR's title); at most
    MAX_TERMS. A hyphenated compound is sought by its parts alone: the records holding it
    index its joined spelling as well, which would count it twice.

    Raises:
        InvalidQueryError: the text holds no word to search for.
    """
    text = text.replace("\x00", " ")
    tokens = _WORD.findall(text)
    if not tokens:
        raise InvalidQueryError("The query has no words to search for; type a few keywords.")
    words: list[str] = []
    for token in tokens:
        parts = _identifier_parts(token)
        words.append(token.lower())
        if len(parts) > 1:
            words.extend(part for part in parts if part not in STOP_WORDS)
    kept = [w for w in words if w not in STOP_WORDS and len(w) > 1] or words
    extra = [form for name, number in _cited(text) for form in (name + number, number)]
    return list(dict.fromkeys([*kept, *extra]))[:MAX_TERMS]


def word_variants(text: str) -> list[str]:
    """Other spellings of the words of `text`, indexed beside a record's own words: each
    hyphenated compound joined, so "replatforming" finds "re-platforming"; each camelCase
    identifier's words, so "eager imports" finds "setEagerImports" (FTS5 splits snake_case
    itself); and each cited record as one term, so "ADR0014", "ADR-14" and "adr 14" find each
    other ("adr14")."""
    joined = [m.group(0).replace("-", "").lower() for m in _COMPOUND.finditer(text)]
    humps = [
        part
        for token in _WORD.findall(text)
        if _HUMP.search(token)
        for part in _identifier_parts(token)
        if len(part) > 1
    ]
    cited = [name + number for name, number in _cited(text)]
    return list(dict.fromkeys([*joined, *humps, *cited]))


def _identifier_parts(token: str) -> list[str]:
    """The words an identifier is made of, lowercased: split at underscores and at the humps
    of camelCase (`set_eager_imports`, `setEagerImports` -> set, eager, imports); a plain word
    is its own one part. Letters and digits stay together (`REL1_36` -> rel1, 36), as FTS5
    keeps them."""
    return [part.lower() for piece in token.split("_") for part in _HUMP.split(piece) if part]


def _cited(text: str) -> list[tuple[str, str]]:
    """Each record `text` cites by number: its kind ("adr") and its number without zeros."""
    return [(m.group(1).lower(), m.group(2).lstrip("0") or "0") for m in _REFERENCE.finditer(text)]
