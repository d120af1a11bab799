"""`contextd export`: the bounded briefing written into an agent's instruction file, inside a
managed block, with the hash of what was written kept so a hand-edited block is refused."""

from enum import StrEnum
from pathlib import Path

from msgspec import Struct

from contextd.agents.importer import ImportOutcome, import_agent_files, imported_from
from contextd.agents.managed_block import (
    BEGIN,
    END,
    block_hash,
    find_block,
    place_block,
    render_block,
)
from contextd.clock import now
from contextd.core.reading.reader import RecordReader
from contextd.core.recall.briefing import Briefing, briefing_candidates, build_briefing
from contextd.core.workspace.textfiles import read_text, write_text_atomic
from contextd.core.writing.writer import RecordWriter
from contextd.errors import ConflictError, InvalidInputError
from contextd.models import Project
from contextd.storage import agent_files as rows
from contextd.storage.store import Database

__all__ = ["AgentFileService", "CheckOutcome", "ExportOutcome", "Target"]


class Target(StrEnum):
    CLAUDE = "claude"
    CODEX = "codex"
    GEMINI = "gemini"
    CURSOR = "cursor"
    GENERIC = "generic"


FILE_NAMES = {
    Target.CLAUDE: "CLAUDE.md",
    Target.CODEX: "AGENTS.md",
    Target.GEMINI: "GEMINI.md",
    Target.CURSOR: ".cursor/rules/contextd.mdc",
    Target.GENERIC: "CONTEXTD.md",
}

# Cursor reads rule files only with this front matter; alwaysApply puts it in every chat.
CURSOR_FRONT_MATTER = (
    "---\n"
    "description: Project memory from contextd (constraints, decisions, conventions, where "
    "work stopped)\n"
    "globs:\n"
    "alwaysApply: true\n"
    "---\n"
)


class ExportOutcome(Struct, frozen=True):
    path: Path
    action: str  # "created" | "added" (block appended) | "replaced" | "unchanged"
    briefing: Briefing


class CheckOutcome(Struct, frozen=True):
    path: Path
    state: str  # "current" | "stale" | "missing"
    briefing: Briefing

    @property
    def current(self) -> bool:
        return self.state == "current"


class AgentFileService:
    def __init__(
        self, db: Database, writer: RecordWriter, reader: RecordReader, budget: int
    ) -> None:
        self._db = db
        self._writer = writer
        self._reader = reader
        self._budget = budget

    def import_existing(self, project: Project, root: Path) -> ImportOutcome:
        """Import the notes of the agent files at `root` (see agents.importer)."""
        return import_agent_files(self._writer, project, root)

    def target_path(self, project: Project, target: Target, path: Path | None, cwd: Path) -> Path:
        """Where `target`'s file goes: `path` (a file, or a folder to put it in), else the
        project's folder holding `cwd` (else its first attached folder)."""
        if path is not None:
            chosen = (path if path.is_absolute() else cwd / path).resolve()
            return chosen / FILE_NAMES[target] if chosen.is_dir() else chosen
        return _project_root(project, cwd) / FILE_NAMES[target]

    def export(self, project: Project, target: Target, path: Path, *, force: bool) -> ExportOutcome:
        """Write the briefing block into `path`, keeping everything outside it.

        Raises:
            ConflictError: the block was edited since contextd wrote it (unless `force`).
            InvalidInputError: the file cannot be read or written, or its markers are broken.
        """
        where = str(path)
        text = read_text(path)
        briefing, block = self._block(project, target, path)
        if text is not None and not force:
            self._refuse_edited(project, path, text)
        if text is None:
            action, updated = "created", _new_file(target, block)
        else:
            existing = find_block(text, where)
            updated = place_block(text, block, where)
            if existing is None:
                action = "added"
            elif block_hash(existing.inner) == block_hash(_inner(block)):
                action = "unchanged"
            else:
                action = "replaced"
        if updated != text:
            write_text_atomic(path, updated)
        with self._db.transaction() as conn:
            rows.record_written(
                conn,
                rows.WrittenBlock(
                    project.id, str(path), str(target), block_hash(_inner(block)), now()
                ),
            )
        return ExportOutcome(path, action, briefing)

    def check(self, project: Project, target: Target, path: Path) -> CheckOutcome:
        """Whether `path`'s block is what `export` would write now; writes nothing."""
        briefing, block = self._block(project, target, path)
        text = read_text(path)
        found = find_block(text, str(path)) if text is not None else None
        if found is None:
            return CheckOutcome(path, "missing", briefing)
        same = block_hash(found.inner) == block_hash(_inner(block))
        return CheckOutcome(path, "current" if same else "stale", briefing)

    def _block(self, project: Project, target: Target, path: Path) -> tuple[Briefing, str]:
        # Notes `attach` imported from this very file stand outside the block already.
        candidates = briefing_candidates(self._reader, project)
        kept = [r for r in candidates if not imported_from(r, path, project)]
        briefing = build_briefing(
            self._reader, project, self._budget, kept, already_there=len(candidates) - len(kept)
        )
        note = (
            f"_Written by `contextd export {target}`; change the records with contextd and "
            "export again rather than editing this block._"
        )
        return briefing, render_block(f"{briefing.text}\n\n{note}")

    def _refuse_edited(self, project: Project, path: Path, text: str) -> None:
        found = find_block(text, str(path))
        written = rows.written_block(self._db.connection(), project.id, str(path))
        if found is None or written is None or block_hash(found.inner) == written.sha256:
            return
        raise ConflictError(
            f"The contextd block in {path} was edited by hand since contextd wrote it on "
            f"{written.written_at[:10]}; move your text outside the block, or run again with "
            "--force to overwrite it."
        )


def _inner(block: str) -> str:
    return block[len(BEGIN) : -len(END)]


def _new_file(target: Target, block: str) -> str:
    head = CURSOR_FRONT_MATTER + "\n" if target is Target.CURSOR else ""
    return f"{head}{block}\n"


def _project_root(project: Project, cwd: Path) -> Path:
    here = cwd.resolve()
    holding = [Path(p) for p in project.paths if here.is_relative_to(p)]
    if holding:
        return max(holding, key=lambda p: len(p.parts))
    if project.paths:
        return Path(project.paths[0])
    raise InvalidInputError(
        f"Project {project.slug} has no attached folder on this machine; run `contextd attach` "
        "in its checkout, or pass --path."
    )
