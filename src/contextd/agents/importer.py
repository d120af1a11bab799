"""`attach` imports what people already wrote in their agent files (outside any contextd
block) as memory records: one per list item or paragraph, its category guessed from the
heading above it."""

import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct, field

from contextd.agents.managed_block import without_block
from contextd.core.workspace.textfiles import read_text
from contextd.core.writing.writer import RecordWriter
from contextd.errors import DuplicateError, InvalidInputError, ValidationError
from contextd.models import Kind, MemoryBody, Origin, Project, Record, RecordDraft

if TYPE_CHECKING:
    from markdown_it.token import Token

__all__ = [
    "AGENT_FILE_NAMES",
    "ImportOutcome",
    "Note",
    "agent_files_in",
    "import_agent_files",
    "imported_from",
]

log = logging.getLogger(__name__)

AGENT_FILE_NAMES = ("CLAUDE.md", "AGENTS.md", "GEMINI.md", ".cursorrules", ".windsurfrules")
_MIN_TEXT = 10  # a memory's shortest text; shorter items get their heading as context
_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_FRONT_MATTER = re.compile(r"\A---\r?\n.*?\r?\n---\r?\n", re.DOTALL)
# First match wins; a heading matching none is a convention.
_CATEGORIES = (
    ("gotcha", ("gotcha", "pitfall", "caveat", "warning", "known issue", "avoid", "don't")),
    ("architecture", ("architecture", "structure", "layout", "design", "component", "stack")),
    ("preference", ("preference",)),
)


class Note(Struct, frozen=True):
    """One importable piece of an agent file."""

    text: str
    heading: str
    category: str


class ImportOutcome(Struct):
    files: list[str] = field(default_factory=list)
    imported: int = 0
    duplicates: int = 0
    refused: int = 0  # too short, a secret, or otherwise invalid


def agent_files_in(root: Path) -> list[Path]:
    """The agent instruction files present at a project's root."""
    found = [root / name for name in AGENT_FILE_NAMES if (root / name).is_file()]
    rules = root / ".cursor" / "rules"
    if rules.is_dir():
        found += sorted(p for p in rules.glob("*.mdc") if p.is_file())
    return found


def import_agent_files(records: RecordWriter, project: Project, root: Path) -> ImportOutcome:
    """Store every note of the agent files at `root` as an `import` memory; a note already
    stored (the same text, or near-identical) is skipped, so running it twice adds nothing."""
    outcome = ImportOutcome()
    for path in agent_files_in(root):
        try:
            text = read_text(path) or ""
            notes = notes_of(_FRONT_MATTER.sub("", without_block(text, str(path)), count=1))
        except InvalidInputError as exc:
            log.warning("not importing %s: %s", path, exc)
            continue
        relative = path.relative_to(root).as_posix()
        outcome.files.append(relative)
        for note in notes:
            _store(records, project, note, _source_tag(relative), outcome)
    return outcome


def imported_from(record: Record, path: Path, project: Project) -> bool:
    """Whether `record` is a note `attach` imported from the agent file at `path`."""
    if record.origin is not Origin.IMPORT or "imported" not in record.tags:
        return False
    return any(
        path.is_relative_to(root) and _source_tag(path.relative_to(root).as_posix()) in record.tags
        for root in map(Path, project.paths)
    )


def _store(
    records: RecordWriter, project: Project, note: Note, tag: str, outcome: ImportOutcome
) -> None:
    draft = RecordDraft(
        kind=Kind.MEMORY,
        title=note.text,
        body=MemoryBody(),
        category=note.category,
        tags=("imported", tag),
        origin=Origin.IMPORT,
    )
    try:
        records.create(draft, project)
    except DuplicateError:
        outcome.duplicates += 1
    except ValidationError as exc:
        log.info("not importing a note under %r: %s", note.heading, exc)
        outcome.refused += 1
    else:
        outcome.imported += 1


def notes_of(markdown: str) -> list[Note]:
    """Split Markdown into notes: each top-level list item and paragraph is one, a code block
    joins the note before it, and a paragraph ending in ':' leads the list after it."""
    return _Splitter(markdown).notes()


class _Splitter:
    def __init__(self, markdown: str) -> None:
        self._markdown = markdown
        self._lines = markdown.splitlines()
        self._notes: list[Note] = []
        self._heading = ""
        self._lead = ""  # a paragraph ending in ':' that introduces what follows
        self._lead_used = False

    def notes(self) -> list[Note]:
        from markdown_it import MarkdownIt  # Deferred: only attach parses Markdown.

        tokens = MarkdownIt("commonmark").parse(self._markdown)
        for index, token in enumerate(tokens):
            if token.map is not None:
                source = "\n".join(self._lines[token.map[0] : token.map[1]]).strip()
                self._take(token, source, tokens[index + 1] if index + 1 < len(tokens) else None)
            elif token.type.endswith("_list_close") and token.level == 0:
                self._lead = ""
        self._flush_lead()
        return [n for n in self._notes if n.text]

    def _take(self, token: "Token", source: str, following: "Token | None") -> None:
        if token.level == 1 and token.type == "list_item_open":
            self._lead_used = True
            self._notes.append(_note(_item_text(source), self._heading, self._lead))
            return
        if token.level != 0:
            return
        if token.type == "heading_open" and following is not None:
            self._flush_lead()
            self._heading = following.content.strip()
        elif token.type in ("fence", "code_block"):
            self._add_code(source)
        elif token.type == "paragraph_open":
            self._flush_lead()
            if source.endswith(":"):
                self._lead, self._lead_used = source, False
            else:
                self._notes.append(_note(source, self._heading, ""))

    def _add_code(self, source: str) -> None:
        if self._lead and not self._lead_used:
            self._notes.append(_note(f"{self._lead}\n{source}", self._heading, ""))
            self._lead = ""
        elif self._notes and self._notes[-1].heading == self._heading:
            last = self._notes[-1]
            self._notes[-1] = Note(f"{last.text}\n{source}", last.heading, last.category)

    def _flush_lead(self) -> None:
        if self._lead and not self._lead_used:
            self._notes.append(_note(self._lead, self._heading, ""))
        self._lead = ""


def _note(text: str, heading: str, lead: str) -> Note:
    if lead:
        text = f"{lead} {text}"
    elif len(text) < _MIN_TEXT and heading:
        text = f"{heading}: {text}"
    return Note(text.strip(), heading, _category(heading))


def _item_text(source: str) -> str:
    first, _, rest = source.partition("\n")
    body = _MARKER.sub("", first, count=1)
    return f"{body}\n{_dedent(rest)}".strip() if rest.strip() else body.strip()


def _dedent(text: str) -> str:
    lines = text.splitlines()
    indents = [len(x) - len(x.lstrip()) for x in lines if x.strip()]
    cut = min(indents, default=0)
    return "\n".join(x[cut:] for x in lines)


def _category(heading: str) -> str:
    lowered = heading.lower()
    for category, words in _CATEGORIES:
        if any(word in lowered for word in words):
            return category
    return "convention"


def _source_tag(relative: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", relative.lower()).strip("-")[:40] or "agent-file"
