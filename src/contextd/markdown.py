"""Reading the parts of a Markdown text that a record's checks and its vector care about. The
standard library only."""

import re

__all__ = ["decision_section", "headline"]

# An ADR's section saying what was decided (Nygard's "Decision", MADR's "Decision Outcome").
_DECISION = re.compile(
    r"^(?P<level>#{1,6})[ \t]*(?:the[ \t]+)?decisions?(?:[ \t]+outcome)?[ \t]*:?[ \t]*$",
    re.I | re.M,
)
_HEADING = re.compile(r"^(?P<level>#{1,6})\s", re.M)
_LINK = re.compile(r"\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])")


def headline(text: str) -> str:
    """The first line of `text`, trimmed."""
    return text.strip().split("\n", 1)[0]


def decision_section(text: str) -> str:
    """What the Decision section of `text` says, up to the next heading of its level or above,
    with each link reduced to its words; "" when it has none."""
    found = _DECISION.search(text)
    if found is None:
        return ""
    level = len(found["level"])
    later = (h.start() for h in _HEADING.finditer(text, found.end()) if len(h["level"]) <= level)
    return _LINK.sub(r"\1", text[found.end() : next(later, len(text))]).strip()
