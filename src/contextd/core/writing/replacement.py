"""Telling when a new record seems to replace an older one: a similar record, and words in the
new one that say something changed, tied to that record when they can be.

Only the parts of a record that state what is true now are read for a cue (the title's first
line, a decision's why, a constraint's reason, a pipeline's purpose, and the Decision section of
a Markdown record such as an ADR): a decision's problem or what was tried describes the past
("Redis pub/sub dropped tasks"), which says nothing about which record it replaces; nor does the
rest of a long record's body (an ADR's context "instead of", "no longer" and "rather than" are
everywhere), except where it names the old record itself.

The evidence, strongest first:
- the same headline as an older record (numbering aside: "9. Keycloak configuration" after
  "8. Keycloak configuration");
- a sentence of the body that names an older record (its title, or its number: "ADR003")
  and speaks of that decision as let go of ("We previously decided in ADR043..."), or as a
  decision taken ("In ADR003 we recognised...") when the new record says something changed;
  never one that only adds to it ("This is an addendum to ADR019") or says it was renumbered;
- a cue that names what is let go of ("Move the task queue from NATS JetStream to Redis",
  "Replace X with Y", "Use Y instead of X", "Deprecate X in favour of Y", "Drop X for Y",
  "X retired"): the record whose headline names X (its name and half its words: "Remove VCR
  gem" does not name "Remove Bullet gem"), among the ten nearest (even a loosely similar one:
  the rest of the new record speaks of Y). In a Decision section, whose sentences say more,
  only a proper name counts ("Remove Papertrail", not "removing user") and the headline must
  hold all of it;
- a cue that names nothing old ("moved to", "Bumped", "is now"): the closest record, when it
  is similar enough.
A change of named technologies without such a cue is not flagged: on supersession-dev that
guess was wrong more often than right.
"""

import re
from collections.abc import Sequence

from msgspec.structs import replace

from contextd.fields import KINDS
from contextd.markdown import decision_section, headline
from contextd.models import Kind, Record, Similar, Status

__all__ = ["NAMED_FLOOR", "likely_replaced"]

# A record that the cue names may be this loosely similar ("Switched from Terraform to
# OpenTofu" sits at 0.35 of the Terraform record: the new one is about OpenTofu).
NAMED_FLOOR = 0.25

_WORD = r"[\w/:+#@'-]+(?:\.[\w/:+#@'-]+)*"
# Where a name may begin: not inside a word. Without it a pattern that opens with a name tries
# every character of a long word as a start, which took seconds on a 20,000-character record.
_AT_WORD = r"(?<![\w/:+#@'.-])"
# A short name of a thing; it never runs on past the word that introduces the new one.
_PLAIN = rf"(?!(?:from|to|with|by|for|into|onto|off|in)\b){_WORD}"
_THING = rf"(?:the |our |an? )?{_PLAIN}(?: {_PLAIN}){{0,3}}?"
_ENDS = r"(?=\s+(?:with|by|for|to|onto|into|in favou?r of|and)\b|\s*[,;.()]|\s*$)"
_MOVE = (
    r"(?:mov(?:e|es|ed|ing)|migrat(?:e|es|ed|ing)|switch(?:es|ed|ing)?|port(?:s|ed|ing)?|"
    r"convert(?:s|ed|ing)?|chang(?:e|es|ed|ing)|transition(?:s|ed|ing)?|revert(?:s|ed|ing)?|"
    r"roll(?:s|ed|ing)?(?: \w+){0,4} back|go(?:es|ing)? back|went back)"
)
_LET_GO = (
    r"(?:deprecat(?:e|es|ed|ing)|drop(?:s|ped|ping)?|remov(?:e|es|ed|ing)|"
    r"retir(?:e|es|ed|ing)|abandon(?:s|ed|ing)?|phas(?:e|es|ed|ing) out|ban(?:s|ned)?|"
    r"stop(?:s|ped|ping)? using|no longer us(?:e|es|ing)|sunset(?:s|ting)?)"
)
_WAS = r"(?:(?:is|are|was|were|has been|have been|gets|got) )?"
# Cues that name the old thing (group "old"), then cues that name nothing old.
_NAMING = [
    re.compile(
        rf"\b{_MOVE}(?: {_PLAIN}){{0,5}}? (?:away from|from|off) (?P<old>{_THING}){_ENDS}", re.I
    ),
    re.compile(rf"\b{_MOVE} (?P<old>{_THING}) (?:to|onto|into|over to|off)\b", re.I),
    re.compile(rf"\bmigration (?:from|off) (?P<old>{_THING}){_ENDS}", re.I),
    re.compile(rf"\breplac(?:e|es|ing) (?P<old>{_THING}){_ENDS}", re.I),
    re.compile(
        rf"{_AT_WORD}(?P<old>{_WORD}(?: {_WORD}){{0,2}}) {_WAS}replaced (?:with|by)\b", re.I
    ),
    re.compile(rf"\b(?:instead of|rather than|in place of|away from) (?P<old>{_THING})", re.I),
    re.compile(rf"\b{_LET_GO} (?P<old>{_THING}){_ENDS}", re.I),
    re.compile(
        rf"{_AT_WORD}(?P<old>{_WORD}(?: {_WORD}){{0,2}}) {_WAS}"
        r"(?:retired|deprecated|dropped|removed|abandoned|phased out|banned|superseded)\b",
        re.I,
    ),
    re.compile(rf"{_AT_WORD}(?P<old>{_WORD}(?: {_WORD}){{0,2}}) (?:is|are) no longer\b", re.I),
]
_BARE = re.compile(
    rf"\b(?:{_MOVE}(?: over)? (?:to|onto)|no longer|not any ?more|from now on|(?:is|are) now|"
    r"now (?:use|uses|using|run|runs|goes|go|lives?|requires?)|went with|"
    r"bump(?:s|ed)?(?: \S+){0,4} (?:to|from)|upgrad(?:e|es|ed)|downgrad(?:e|es|ed)|in favou?r of|"
    r"superseded|replac(?:e|es|ed|ing)|switched over)\b",
    re.I,
)
# A sentence that speaks of an earlier decision as let go of ...
_PAST = re.compile(
    r"\b(?:previously|prior|earlier|originally|the old|until now|used to|revisit(?:ed|ing)?|"
    r"supersed(?:e|es|ed|ing)|replac(?:e|es|ed|ing)|no longer|instead of)\b",
    re.I,
)
# ... or only as taken, which a new record may still stand on ("In ADR001 we decided...").
_TAKEN = re.compile(r"\b(?:decided|we (?:recognised|recognized|chose|agreed))\b", re.I)
# A sentence that cites an older record to add to it, or says it was only renumbered.
_ALONGSIDE = re.compile(
    r"\b(?:addendum|augment(?:s|ed|ing)?|amend(?:s|ed|ing)?|extend(?:s|ed|ing)?|"
    r"builds? on|in addition to|complement(?:s|ed|ing)?|renamed|renumbered)\b",
    re.I,
)
# Where a Markdown link points, and bare addresses: their numbers ("/2022/07/") cite nothing.
_ADDRESS = re.compile(r"\]\([^)\s]*\)|https?://\S+")
_NUMBERED = re.compile(
    r"^\s*(?:adr[-\s#]?0*(?P<adr>\d+)|0*(?P<n>\d+))\s*[.:)-]?\s+(?P<rest>.+)$", re.I
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_TOKENS = re.compile(r"[\w+#]+(?:[.-][\w+#]+)*")
_FILLER = frozenset(
    "the a an our we us to from with by for of in on at into onto and or is are was were be "
    "been it its this that these those as all any every new old now use uses used using".split()
)
_MAX_SHOWN = 40


def likely_replaced(new: Record, near: Sequence[Similar], looser: float) -> Similar | None:
    """Of the records `near` the new one (closest first), the one it seems to replace, marked
    with why; `looser` is how similar a record must be unless a cue names it (NAMED_FLOOR)."""
    candidates = [s for s in near if s.record.status is Status.ACTIVE and s.record.id != new.id]
    close = [s for s in candidates if s.similarity >= looser]
    head = _headline(new)
    same = _name(head).casefold()
    for found in close:
        if len(same) >= 4 and _name(_headline(found.record)).casefold() == same:
            return replace(found, replaces="it has the same title")
    statement = _statement(new)
    decided = decision_section(new.title)
    changes = any(p.search(statement) or p.search(decided) for p in (*_NAMING, _BARE))
    body = new.title[len(head) :]
    for found in close:
        sentence = _refers_back(body, _headline(found.record), changes=changes)
        if sentence is not None:
            return replace(found, replaces=_said(sentence))
    named = [(m[0], m["old"], False) for p in _NAMING for m in p.finditer(statement)]
    named += [(m[0], m["old"], True) for p in _NAMING for m in p.finditer(decided)]
    for found in candidates:
        if found.similarity < NAMED_FLOOR:
            continue
        for cue, old, strict in named:
            if (not strict or _is_name(old)) and _names(_headline(found.record), old, strict):
                return replace(found, replaces=_said(cue))
    bare = _BARE.search(statement)
    if not named and bare is not None and close:
        return replace(close[0], replaces=_said(bare.group(0)))
    return None


def _statement(record: Record) -> str:
    """The parts of a record that say what is true now."""
    main = KINDS[record.kind].main
    if record.kind is Kind.CHECKPOINT or main == "title":
        return _headline(record)
    return f"{_headline(record)}\n{getattr(record.body, main)}"


def _headline(record: Record) -> str:
    return headline(record.title)


def _name(headline: str) -> str:
    """A headline without its number ("ADR003: Use GOV.UK Signon" -> "Use GOV.UK Signon")."""
    numbered = _NUMBERED.match(headline)
    return numbered["rest"].strip() if numbered else headline.strip()


def _words(text: str) -> list[str]:
    return [w for w in _TOKENS.findall(text.casefold()) if w not in _FILLER]


def _is_name(thing: str) -> bool:
    """Whether `thing` is a proper name ("Papertrail", "Standard.rb", "S3"), not a common noun
    ("the backend checks"): a word but filler with a capital, a digit or a dot."""
    return any(
        w.casefold() not in _FILLER and (not w.islower() or not w.isalpha())
        for w in _TOKENS.findall(thing)
    )


def _names(headline: str, thing: str, every: bool = False) -> bool:
    """Whether `headline` names `thing`: its first word (the name: "Terraform" of "Terraform
    Cloud backend") and at least half of the rest but filler (`every`: all of it), each as a
    word of the headline or of a hyphenated or dotted one ("use-bullet-to-catch" names "Bullet
    gem")."""
    said: set[str] = set()
    for token in _TOKENS.findall(headline.casefold()):
        said.update((token, *_parts(token)))
    words = _words(thing)
    named = [word in said or bool(_parts(word, ".") & said) for word in words]
    enough = all(named) if every else 2 * sum(named) >= len(words)
    return bool(words) and named[0] and enough


def _parts(token: str, between: str = "-.") -> set[str]:
    """The names inside a word joined by `between`: "standard.rb" -> standard, but no number
    ("3.11" is not "3"). A thing named "form-id" is not "form": only a headline's slugs
    ("use-bullet-to-catch") are split at hyphens."""
    return {
        part
        for part in re.split(f"[{re.escape(between)}]", token)
        if len(part) > 2 and part.isalpha()
    }


def _refers_back(body: str, old_headline: str, *, changes: bool) -> str | None:
    """The sentence of `body` that cites the record headed `old_headline` by its number
    ("ADR003", "0008") and speaks of it as let go of, or (when the new record `changes`
    something) as a decision taken; None if there is none."""
    numbered = _NUMBERED.match(old_headline)
    if numbered is None:
        return None
    number = numbered["adr"] or numbered["n"]
    cited = re.compile(rf"\badr[-\s#]?0*{number}\b|\b0{{1,3}}{number}\b", re.I)
    for sentence in _SENTENCES.split(_ADDRESS.sub("]", body)):
        past = _PAST.search(sentence) or (changes and _TAKEN.search(sentence))
        if cited.search(sentence) and past and not _ALONGSIDE.search(sentence):
            return sentence
    return None


def _said(phrase: str) -> str:
    phrase = " ".join(phrase.split())
    if len(phrase) > _MAX_SHOWN:
        phrase = phrase[: _MAX_SHOWN - 1] + "…"
    return f"it says \u201c{phrase}\u201d"
