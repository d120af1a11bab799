"""Telling when a new record seems to replace an older one: a similar record, and a cue in
what the new one states that something changed.

Only the parts of a record that state what is true now are read for a cue (the title, a
decision's why, a constraint's reason, a pipeline's purpose): a decision's problem or what
was tried describes the past ("Redis pub/sub dropped tasks"), which says nothing about which
record it replaces. A change of named technologies without such a cue is not flagged: on
supersession-dev that guess was wrong more often than right.
"""

import re

from contextd.fields import KINDS
from contextd.models import Kind, Record, Status

__all__ = ["replacement_reason"]

_CUES = re.compile(
    r"\b(?:"
    # moved / switched / rolled back ... from or to something
    r"(?:moved|migrated|switched|changed|converted|ported|rolled(?: \w+){0,4} back)"
    r"(?: [\w./-]+){0,4} (?:from|to|off|away from|over to)|"
    r"migrat(?:ed|ing|ion) (?:from|to|off)|switch(?:ed|ing)? over|"
    # an old thing let go of
    r"replac(?:ed|es|ing)|instead of|no longer|not any ?more|retired|deprecated|dropped|"
    r"abandoned|removed|banned|superseded|phased out|in favou?r of|rather than|"
    r"(?:was|were|is|are) (?:deleted|removed|frozen)|"
    # a new thing taken up
    r"went with|changed to|from now on|(?:is|are) now|"
    r"now (?:use|uses|using|run|runs|goes|go|lives?|requires?)|"
    r"bumped|upgraded|downgraded|adopted"
    r")\b",
    re.IGNORECASE,
)
_MAX_SHOWN = 40


def replacement_reason(new: Record, old: Record) -> str | None:
    """Why `new` looks like it replaces `old` (the phrase naming the change), or None.

    The caller has already found the two similar; this looks for a change cue in what the
    new record states.
    """
    if old.status is not Status.ACTIVE or old.id == new.id:
        return None
    cue = _CUES.search(_statement(new))
    if cue is None:
        return None
    phrase = " ".join(cue.group(0).split())
    if len(phrase) > _MAX_SHOWN:
        phrase = phrase[: _MAX_SHOWN - 1] + "…"
    return f"it says \u201c{phrase}\u201d"


def _statement(record: Record) -> str:
    """The parts of a record that say what is true now."""
    main = KINDS[record.kind].main
    if record.kind is Kind.CHECKPOINT or main == "title":
        return record.title
    return f"{record.title}\n{getattr(record.body, main)}"
