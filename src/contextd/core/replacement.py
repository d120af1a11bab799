"""Telling when a new record seems to replace an older one: same subject, a different choice."""

import re

from contextd.models import Record, Status, body_to_dict

__all__ = ["replacement_reason"]

_CUES = re.compile(
    r"\b(?:moved (?:from|to|off|away from)|migrat(?:ed|ing|ion) (?:from|to|off)|"
    r"switch(?:ed|ing)? (?:from|to|over)|replac(?:ed|es|ing)|instead of|no longer|"
    r"not any ?more|retired|deprecated|dropped|in favou?r of|went with|changed to|"
    r"from now on|now (?:use|uses|using|run|runs|goes|go)|rather than)\b",
    re.IGNORECASE,
)
# Named things: words with a capital inside or after the first letter, digits or inner dots,
# e.g. NATS, PostgreSQL, GitHub, argon2id, pyproject.toml, k8s.
_NAME = re.compile(
    r"\b(?:[A-Za-z]+[A-Z][\w.+-]*|[A-Z]{2,}[\w.+-]*|[A-Za-z]+\d[\w.+-]*|"
    r"[a-z]+\.[a-z][\w.]*)\b"
)


def replacement_reason(new: Record, old: Record) -> str | None:
    """Why `new` looks like it replaces `old` (a phrase naming the change), or None.

    The caller has already found the two similar; this looks for a replacement cue in the new
    text, or a named technology that changed between them.
    """
    if old.status is not Status.ACTIVE or old.id == new.id:
        return None
    new_text, old_text = _text(new), _text(old)
    cue = _CUES.search(new_text)
    if cue:
        return f"it says \u201c{cue.group(0)}\u201d"
    added = _names(new_text) - _names(old_text)
    dropped = _names(old_text) - _names(new_text)
    if added and dropped:
        return (
            f"it names {', '.join(sorted(added)[:2])} where the older one names "
            f"{', '.join(sorted(dropped)[:2])}"
        )
    return None


def _names(text: str) -> set[str]:
    return {match.group(0).lower() for match in _NAME.finditer(text)}


def _text(record: Record) -> str:
    parts = [record.title]
    parts += [str(v) for v in body_to_dict(record.body).values() if isinstance(v, str)]
    return "\n".join(parts)
