"""A folder of Architecture Decision Records (one Markdown file each, as Nygard's template,
adr-tools and MADR lay them out) read into source entries.

Each ADR becomes a decision: its title is the decision; its context (and decision drivers) the
problem; its decision (and rationale) why it was chosen; its options the alternatives; its
consequences the trade-offs. A section of another name stays with the section before it. An ADR
whose context or decision is too short for a decision record is kept whole as a memory of
category `decision`, so nothing it says is lost.

What the ADR states about itself is believed, not guessed: its status (accepted and proposed
are current; rejected and deprecated are archived; "Superseded by ADR-0012" is superseded by
that ADR), "Supersedes [3. …](0003-….md)" in a later one, and its date. A successor is named by
a link to its file or by its number; an ADR replaced by several (a decision split in two) is
superseded by the first and related to the others."""

import re
from collections.abc import Callable
from pathlib import Path

from contextd.errors import InvalidInputError
from contextd.importers.entry import SourceEntry, SourceStatus, source_instant
from contextd.importers.files import MAX_ENTRIES, read_bounded, source_folder
from contextd.importers.frontmatter import FrontMatterError, split_front_matter
from contextd.models import DecisionBody, Kind, MemoryBody, Origin, RecordDraft

__all__ = ["adr_folder", "adr_number", "read_adrs"]

ADR_LIMIT = 1024 * 1024  # bytes in one ADR
_NOT_ADRS = frozenset({"readme", "index", "toc"})
_USUAL_PLACES = (
    "docs/adr",
    "doc/adr",
    "docs/adrs",
    "adr",
    "ADR",
    "docs/decisions",
    "docs/architecture/decisions",
    "doc/architecture/decisions",
    "docs/architecture/adr",
    "architecture-decision-records",
    "docs/architecture-decision-records",
)
_FILE_NUMBER = re.compile(r"^(?:adr[-_ ]?)?0*(\d{1,5})(?:[-_ .]|$)", re.I)
_TITLE_NUMBER = re.compile(r"^\s*(?:adr[-\s#]?0*(\d{1,5})|0*(\d{1,5}))\s*[.:)-]?\s+\S", re.I)
# "#25. Automatic code merging" is a heading to its author, if not to CommonMark.
_HEADING = re.compile(r"^(#{1,6})(?:\s+|(?=\d))(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_FIELD_LINE = re.compile(r"^[\s*>-]*\**(status|date)\**\s*:\s*\**(.*?)\**\s*$", re.I)
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_LINK = re.compile(r"\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?[^)]*\)")
_CITED = re.compile(r"\badr[-\s#]?0*(\d{1,5})\b|(?<![\w.-])0*(\d{1,5})(?=[.:\s,;)]|$)", re.I)
_SUPERSEDED_BY = re.compile(
    r"\b(?:superseded|replaced|deprecated|obsoleted)\s+(?:by|in favou?r of|with)\b(.*)", re.I
)
_SUPERSEDES = re.compile(r"\b(?:supersedes|replaces|obsoletes)\b(.*)", re.I)
_STATED_LINK = re.compile(r"\b(?:superseded|supersedes)\b", re.I)
_RETIRED = frozenset({"rejected", "deprecated", "withdrawn"})  # statuses that archive an ADR
_UNDECIDED = frozenset({"proposed", "draft", "pending", "open"})  # held for review

# Section headings (lowercase, numbering and punctuation gone) -> the decision field they fill.
_FIELDS = {
    "context": "problem",
    "context and problem statement": "problem",
    "problem": "problem",
    "problem statement": "problem",
    "background": "problem",
    "motivation": "problem",
    "decision drivers": "problem",
    "forces": "problem",
    "decision": "why_chosen",
    "decision outcome": "why_chosen",
    "rationale": "why_chosen",
    "justification": "why_chosen",
    "proposal": "why_chosen",
    "considered options": "alternatives",
    "options considered": "alternatives",
    "options": "alternatives",
    "alternatives": "alternatives",
    "alternatives considered": "alternatives",
    "pros and cons of the options": "alternatives",
    "consequences": "tradeoffs",
    "positive consequences": "tradeoffs",
    "negative consequences": "tradeoffs",
    "implications": "tradeoffs",
    "trade-offs": "tradeoffs",
    "tradeoffs": "tradeoffs",
}
_PARTS = ("problem", "why_chosen", "alternatives", "tradeoffs")


def read_adrs(folder: Path) -> list[SourceEntry]:
    """The ADRs in `folder` (its *.md files but README, index and templates), in file order.

    Raises:
        InvalidInputError: no ADR there, too many, or one that cannot be read or whose front
            matter is malformed.
    """
    root = source_folder(folder, "a folder of ADRs (such as docs/adr)")
    paths = _adr_paths(root)
    if not paths:
        raise InvalidInputError(
            f"No ADRs in {root}: expected one Markdown file per decision, such as "
            "0001-record-architecture-decisions.md."
        )
    if len(paths) > MAX_ENTRIES:
        raise InvalidInputError(
            f"{root} holds {len(paths)} ADRs; one import takes at most {MAX_ENTRIES}."
        )
    adrs = [_read(path) for path in paths]
    by_file = {adr.key.lower(): adr.key for adr in adrs}
    by_number: dict[int, str] = {}
    for adr in adrs:
        if adr.number is not None:
            by_number.setdefault(adr.number, adr.key)
    successors = {adr.key: _successors(adr, by_file, by_number) for adr in adrs}
    in_folder = set(by_file.values())
    for adr in adrs:  # "Supersedes X" in a later ADR, where X does not say so itself
        for old in _refs(_after(_SUPERSEDES, adr.status), by_file, by_number):
            named = successors[old]
            if old != adr.key and adr.key not in named and set(named) <= in_folder:
                named.append(adr.key)
    return [_entry(adr, successors[adr.key], by_file) for adr in adrs]


def adr_folder(project: Path) -> tuple[Path, int] | None:
    """Where the project at `project` keeps its ADRs, and how many: the folder adr-tools'
    `.adr-dir` names, else the first of the usual places holding any."""
    named = project / ".adr-dir"
    places = list(_USUAL_PLACES)
    try:
        if named.is_file() and named.stat().st_size < 4096:
            places.insert(0, named.read_text("utf-8").strip())
    except (OSError, UnicodeDecodeError):
        pass
    for place in places:
        folder = project / place
        if place and folder.is_dir() and folder.resolve().is_relative_to(project.resolve()):
            found = _adr_paths(folder)
            if found:
                return folder, len(found)
    return None


def _adr_paths(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.glob("*.md") if p.is_file() and _is_adr(p))
    except OSError:
        return []


def _is_adr(path: Path) -> bool:
    """Not the folder's README or index, nor a template ("adr-template-minimal.md",
    "0000-template.md", "ADRXXX-…-template.md"); an ADR numbered 1 or more is one whatever
    it is about ("0012-use-a-template-engine.md")."""
    stem = path.stem.lower()
    if stem in _NOT_ADRS:
        return False
    numbered = _FILE_NUMBER.match(stem)
    return bool(numbered and int(numbered.group(1))) or "template" not in re.split(r"[-_ .]+", stem)


class _Adr:
    def __init__(self, path: Path, front: dict[str, str], text: str) -> None:
        self.key = path.stem
        self.where = path.name
        lines = _outside_code(text)
        self.title = _title(lines) or _title_of_file(path.stem)
        self.sections = _sections(lines, self.title)
        opening = self.sections.get("", "")
        fields = _fields(opening)
        stated = (
            front.get("status", ""),
            fields.get("status", ""),
            _unquoted(self.sections.get("status", "")),
            # "This decision has been superseded by decision: [0009 …](0009-….md)"
            *(line for line in opening.split("\n") if _STATED_LINK.search(line)),
        )
        self.status = "\n".join(s for s in stated if s)
        dated = _DATE.search(front.get("date", "") or fields.get("date", ""))
        self.date = dated.group(1) if dated else None
        self.text = text
        self.number = adr_number(path.name, self.title)
        # Its number as people cite it, kept as a retrieval hint: SourceEntry.identity.
        self.identity = f"ADR-{self.number}" if self.number else None


def _title_of_file(stem: str) -> str:
    """ "0025-automatic-code-merge" -> "25. Automatic code merge"."""
    numbered = _FILE_NUMBER.match(stem)
    words = stem[numbered.end() :] if numbered else stem
    words = re.sub(r"[-_]+", " ", words).strip().capitalize()
    return f"{int(numbered.group(1))}. {words}" if numbered and words else words or stem


def adr_number(name: str, title: str) -> int | None:
    """The ADR's number: its file name's ("0012-use-nats.md"), else its title's."""
    filed = _FILE_NUMBER.match(name)
    if filed is not None:
        return int(filed.group(1))
    titled = _TITLE_NUMBER.match(title)
    return int(titled.group(1) or titled.group(2)) if titled else None


def _read(path: Path) -> _Adr:
    text = read_bounded(path, ADR_LIMIT).replace("\r\n", "\n")
    front: dict[str, str] = {}
    if text.startswith("---\n"):
        try:
            fields, text = split_front_matter(text)
        except FrontMatterError as exc:
            raise InvalidInputError(
                f"{path} has front matter that cannot be read: {exc}; fix it, then run the "
                "import again."
            ) from None
        front = {k.lower(): v for k, v in fields.items() if isinstance(v, str)}
    return _Adr(path, front, text.strip())


def _outside_code(text: str) -> list[tuple[str, bool]]:
    """Each line, and whether it may be a heading (not inside a fenced code block)."""
    lines, fenced = [], False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        lines.append((line, not fenced))
    return lines


def _title(lines: list[tuple[str, bool]]) -> str:
    """The first level-1 heading, else the first heading that is not a section's name."""
    headings = [
        (m.group(1), m.group(2)) for line, free in lines if free and (m := _HEADING.match(line))
    ]
    first = next((t for level, t in headings if level == "#"), None)
    if first is None:
        named = (t for _, t in headings if _section_name(t) not in _FIELDS | {"status": ""})
        first = next(named, "")
    return _plain(first)


def _sections(lines: list[tuple[str, bool]], title: str) -> dict[str, str]:
    """Each section's text by its heading (lowercase, numbering gone); "" holds the text
    between the title and the first section."""
    sections: dict[str, list[str]] = {"": []}
    current, titled = "", False
    for line, free in lines:
        heading = _HEADING.match(line) if free else None
        if heading is not None and not titled and _plain(heading.group(2)) == title:
            titled = True
            continue
        if heading is not None:
            current = _section_name(heading.group(2))
            sections.setdefault(current, [])
            continue
        sections[current].append(line)
    return {name: "\n".join(body).strip() for name, body in sections.items()}


def _section_name(heading: str) -> str:
    name = re.sub(r"^[\d.\s]+", "", _plain(heading)).lower().rstrip(":?. ")
    return re.sub(r"\s+", " ", name)


def _plain(text: str) -> str:
    """Heading text without emphasis and code marks (a name's underscores stay)."""
    return re.sub(r"[*`]", "", text).strip()


def _unquoted(text: str) -> str:
    """A section without its block quotes: a template's guidance ("> Valid statuses are …,
    Superseded by ADRzzz") left in place says nothing of this ADR."""
    return "\n".join(line for line in text.split("\n") if not line.lstrip().startswith(">"))


def _fields(preamble: str) -> dict[str, str]:
    """`Status: …` and `Date: …` lines (also as list items or bold) before the first section."""
    found: dict[str, str] = {}
    for line in preamble.split("\n"):
        matched = _FIELD_LINE.match(line)
        if matched is not None:
            found.setdefault(matched.group(1).lower(), matched.group(2))
    return found


def _after(pattern: re.Pattern[str], status: str) -> str:
    found = pattern.search(status)
    return found.group(1) if found else ""


def _refs(text: str, by_file: dict[str, str], by_number: dict[int, str]) -> list[str]:
    """The ADRs a status text names: by a link to their file, else by their number."""
    found = [key for key in map(_linked(by_file), _LINK.findall(text)) if key]
    if found:
        return list(dict.fromkeys(found))
    numbers = (int(a or b) for a, b in _CITED.findall(text))
    return list(dict.fromkeys(by_number[n] for n in numbers if n in by_number))


def _linked(by_file: dict[str, str]) -> Callable[[str], str | None]:
    """What a link's target names: the ADR whose file it is, if it is one of the folder's."""

    def key(target: str) -> str | None:
        return by_file.get(Path(target.split("#", 1)[0]).stem.lower())

    return key


def _successors(adr: _Adr, by_file: dict[str, str], by_number: dict[int, str]) -> list[str]:
    """The ADRs this one says replaced it, or what it names when none is in the folder."""
    named = _after(_SUPERSEDED_BY, adr.status)
    if not named and not re.search(r"\bsuperseded\b", adr.status, re.I):
        return []
    found = [key for key in _refs(named, by_file, by_number) if key != adr.key]
    return found or [named.strip(" .:;") or "an ADR it does not name"]


def _entry(adr: _Adr, successors: list[str], by_file: dict[str, str]) -> SourceEntry:
    """The ADR as an entry: replaced by the first of its successors, the others (a decision
    split in two) related to it, as are the ADRs it links."""
    successor = successors[0] if successors else None
    first = re.search(r"[a-z]+", adr.status, re.I)
    word = first.group(0).lower() if first else ""
    status, reason = SourceStatus.ACTIVE, None
    if successor is not None:
        status = SourceStatus.SUPERSEDED
    elif word in _RETIRED:
        status, reason = SourceStatus.ARCHIVED, f"The ADR's status is {word}."
    elif word in _UNDECIDED:
        status = SourceStatus.PROPOSED
    links = [*successors[1:], *map(_linked(by_file), _LINK.findall(adr.text))]
    related = tuple(dict.fromkeys(k for k in links if k and k not in (adr.key, successor)))
    return SourceEntry(
        source_id=adr.key,
        where=adr.where,
        draft=_draft(adr),
        status=status,
        successor=successor,
        related=related,
        archived_reason=reason,
        identity=adr.identity,
    )


def _draft(adr: _Adr) -> RecordDraft:
    parts = _parts(adr.sections)
    if len(parts["problem"]) >= 40 and len(parts["why_chosen"]) >= 60:
        kind, title = Kind.DECISION, adr.title
        body: DecisionBody | MemoryBody = DecisionBody(**parts)
    else:
        kind, title, body = Kind.MEMORY, _whole(adr), MemoryBody()
    return RecordDraft(
        kind=kind,
        title=title,
        body=body,
        category="decision" if kind is Kind.MEMORY else None,
        tags=("adr",),
        retrieval_hints=(adr.identity,) if adr.identity else (),
        origin=Origin.IMPORT,
        created_at=_instant(adr),
    )


def _instant(adr: _Adr) -> str | None:
    """The date the ADR states; one that is no real date, or lies ahead, is left out (the
    record is then dated by its import) rather than refusing the whole folder."""
    try:
        return source_instant(adr.date, adr.where, "its date")
    except InvalidInputError:
        return None


def _parts(sections: dict[str, str]) -> dict[str, str]:
    """The decision's fields from the sections, in order: each known heading fills its field;
    a section of another name joins the field before it (the text before the first section,
    the problem). A section joining text already there is headed by its name."""
    gathered: dict[str, list[str]] = {part: [] for part in _PARTS}
    field = "problem"
    for heading, text in sections.items():
        if heading == "status":
            continue
        known = _FIELDS.get(heading)
        if heading == "":
            text = _without_fields(text)
        field = known or field
        if text:
            named = heading and (known is None or gathered[field])
            gathered[field].append(f"{heading.capitalize()}: {text}" if named else text)
    return {part: "\n\n".join(texts) for part, texts in gathered.items()}


def _whole(adr: _Adr) -> str:
    """The ADR as one memory text: its title, then each section but its status, headed."""
    parts = [adr.title]
    for heading, text in adr.sections.items():
        if heading == "":
            text = _without_fields(text)
        if heading != "status" and text:
            parts.append(f"{heading.capitalize()}: {text}" if heading else text)
    return "\n\n".join(parts)


def _without_fields(preamble: str) -> str:
    return "\n".join(line for line in preamble.split("\n") if not _FIELD_LINE.match(line)).strip()
