"""Kept's notes (`<family>/<project>/<note>.md` under its root) read into source entries: the
front matter's name, description, type, status, verified date and superseded_by link, the body
as the memory's text and its [[wiki links]] as relations. One Kept project per import."""

import re
from pathlib import Path

from contextd.errors import InvalidInputError
from contextd.importers.entry import SourceEntry, SourceStatus, source_instant
from contextd.importers.files import MAX_ENTRIES, read_bounded, source_folder
from contextd.importers.frontmatter import FrontMatterError, Value, split_front_matter
from contextd.models import Kind, MemoryBody, Origin, RecordDraft

__all__ = ["CATEGORIES", "read_kept"]

NOTE_LIMIT = 1024 * 1024  # bytes in one note
# Kept's note types (those of Claude Code's memory) as contextd memory categories; any other
# type that is one word is kept as the category itself.
CATEGORIES = {
    "user": "user",  # who the person is: role, knowledge, preferences
    "feedback": "convention",  # how to work here: guidance given and confirmed
    "project": "project",  # the work under way: goals, incidents, deadlines
    "reference": "reference",  # where things live outside the repository
}
_GENERATED = frozenset({"memory.md"})  # the hot index Kept regenerates from the notes
_LINK = re.compile(r"\[\[([^\]|#\n]+)(?:[#|][^\]\n]*)?\]\]")
_CATEGORY = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
_STATUSES = {
    "active": SourceStatus.ACTIVE,
    "archived": SourceStatus.ARCHIVED,
    "superseded": SourceStatus.ARCHIVED,
}


def read_kept(folder: Path) -> list[SourceEntry]:
    """The notes of the one Kept project at or under `folder` (a project folder, a family
    folder or the root holding a single project).

    Raises:
        InvalidInputError: no notes, notes of several projects, or a note that cannot be read
            or whose front matter is malformed or holds a wrong value.
    """
    root = source_folder(folder, "a Kept project folder (<root>/<family>/<project>)")
    paths = _note_paths(root)
    projects = sorted({p.parent.relative_to(root).as_posix() for p in paths})
    if len(projects) > 1:
        shown = ", ".join(projects[:4]) + (", …" if len(projects) > 4 else "")
        raise InvalidInputError(
            f"{root} holds the notes of {len(projects)} Kept projects ({shown}); import one "
            f"project's folder at a time (for example {root / projects[0]}) so each contextd "
            "project gets its own notes."
        )
    if len(paths) > MAX_ENTRIES:
        raise InvalidInputError(
            f"{root} holds {len(paths)} notes; one import takes at most {MAX_ENTRIES}."
        )
    notes = [_read_note(path, path.relative_to(root).as_posix()) for path in paths]
    names = _name_index(notes)
    return [_entry(note, names) for note in notes]


def _note_paths(root: Path) -> list[Path]:
    """The notes at the shallowest depth (0 to 2 folders down) that has any."""
    for pattern in ("*.md", "*/*.md", "*/*/*.md"):
        found = sorted(
            p
            for p in root.glob(pattern)
            if p.is_file()
            and p.name.lower() not in _GENERATED
            and not any(part.startswith(".") for part in p.relative_to(root).parts)
        )
        if found:
            return found
    raise InvalidInputError(
        f"No Kept notes in {root}: expected <family>/<project>/<note>.md files under the root, "
        "or <note>.md files in a project folder."
    )


class _Note:
    def __init__(self, path: str, fields: dict[str, Value], body: str) -> None:
        self.path = path
        self.key = Path(path).stem
        self.fields = fields
        self.body = body

    def text(self, field: str) -> str:
        value = self.fields.get(field, "")
        if not isinstance(value, str):
            raise InvalidInputError(
                f"{self.path}: `{field}` must be a single value, not a list; fix the note, "
                "then run the import again."
            )
        return value.strip()

    def texts(self, field: str) -> tuple[str, ...]:
        value = self.fields.get(field, [])
        items = [value] if isinstance(value, str) else value
        return tuple(item.strip() for item in items if item.strip())


def _read_note(path: Path, relative: str) -> _Note:
    text = read_bounded(path, NOTE_LIMIT)
    try:
        fields, body = split_front_matter(text)
    except FrontMatterError as exc:
        raise InvalidInputError(
            f"{path} is not a Kept note: {exc}; fix its front matter, then run the import again."
        ) from None
    return _Note(relative, fields, body)


def _name_index(notes: list[_Note]) -> dict[str, str]:
    """What a [[link]] may say (a file's stem or a note's name, any case) → the note's key."""
    index: dict[str, str] = {}
    for note in notes:
        index.setdefault(note.key.lower(), note.key)
    for note in notes:
        name = note.text("name")
        if name:
            index.setdefault(name.lower(), note.key)
    return index


def _entry(note: _Note, names: dict[str, str]) -> SourceEntry:
    status = _STATUSES.get(note.text("status").lower() or "active")
    if status is None:
        raise InvalidInputError(
            f"{note.path}: status must be active or archived; fix the note, then run the import "
            "again."
        )
    successor = _link_target(note.text("superseded_by"), names)
    if status is SourceStatus.ARCHIVED and successor:
        status = SourceStatus.SUPERSEDED  # Kept's supersede: archived, naming its replacement
    verified = source_instant(note.text("verified") or None, note.path, "verified")
    name = note.text("name")
    # A note's text is its title, so what names it across edits is its name (or file name).
    identity = name or note.key
    draft = RecordDraft(
        kind=Kind.MEMORY,
        title=_memory_text(note.text("description"), note.body, name or note.key),
        body=MemoryBody(),
        category=_category(note.text("type")),
        tags=note.texts("tags"),
        retrieval_hints=(identity,),
        origin=Origin.IMPORT,
        created_at=verified,  # Kept dates a note only by when it was last verified
    )
    related = [_resolve(link, names) for link in _LINK.findall(note.body)]
    return SourceEntry(
        source_id=note.key,
        where=note.path,
        draft=draft,
        status=status,
        successor=successor,
        related=tuple(dict.fromkeys(r for r in related if r != note.key)),
        verified_at=verified,
        updated_at=verified,
        identity=identity,
    )


def _memory_text(description: str, body: str, name: str) -> str:
    """A memory keeps its text in its title: the one-line description, then the body."""
    parts = [p for p in (description, body) if p]
    return "\n\n".join(parts) if parts else name


def _category(kept_type: str) -> str:
    lowered = re.sub(r"\s+", "-", kept_type.strip().lower())
    if not lowered:
        return "note"
    mapped = CATEGORIES.get(lowered, lowered)
    return mapped if _CATEGORY.match(mapped) else "note"


def _link_target(value: str, names: dict[str, str]) -> str | None:
    """The note a `superseded_by` value names: `[[name]]`, quoted or not, or a bare name."""
    if not value:
        return None
    found = _LINK.search(value)
    return _resolve(found.group(1) if found else value, names)


def _resolve(link: str, names: dict[str, str]) -> str:
    """The key of the note a link names, or the link's last path part when no note has it."""
    target = link.strip().removesuffix(".md").rsplit("/", 1)[-1].strip()
    return names.get(target.lower(), target)
