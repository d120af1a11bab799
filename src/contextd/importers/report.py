"""What an import did, or in a dry run would do: each entry imported, already stored or refused
(the first refusal is the one a person fixes first), and what it noted on the way."""

from typing import Any

from msgspec import Struct, field

from contextd.models import Kind, Status

__all__ = ["AlreadyStored", "ImportReport", "Imported", "Refused", "Retired"]

_WHAT = {"context-keeper": "context-keeper entries", "kept": "Kept notes", "adr": "ADRs"}
_TOOL = {"context-keeper": "context-keeper", "kept": "Kept", "adr": "the ADRs"}


class Imported(Struct, frozen=True):
    source_id: str
    where: str
    record_id: str
    kind: Kind
    status: Status
    title: str
    category: str | None = None

    @property
    def label(self) -> str:
        """The kind, or a memory's category."""
        return self.category if self.kind is Kind.MEMORY and self.category else str(self.kind)


class AlreadyStored(Struct, frozen=True):
    """An entry that restates a record the store holds (or another entry of this import)."""

    source_id: str
    where: str
    record_id: str  # the record it restates


class Refused(Struct, frozen=True):
    """An entry that breaks a rule (a too-short field, a secret); never its text, which may
    hold the secret it was refused for."""

    source_id: str
    where: str
    field: str | None
    reason: str


class Retired(Struct, frozen=True):
    """A stored record the source has since replaced, now superseded by its successor."""

    record_id: str
    successor_id: str


class ImportReport(Struct):
    source: str  # "context-keeper" | "kept" | "adr"
    folder: str
    project: str  # the slug of the project imported into
    dry_run: bool
    checked: int = 0  # entries read from the source
    imported: list[Imported] = field(default_factory=list)
    proposed: list[Imported] = field(default_factory=list)  # held for review, not decided yet
    updated: list[Imported] = field(default_factory=list)  # stored before, edited in the source
    already_stored: list[AlreadyStored] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    retired: list[Retired] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def what(self) -> str:
        """What the source's entries are called, for sentences."""
        return _WHAT.get(self.source, f"{self.source} entries")

    @property
    def tool(self) -> str:
        """The source tool's name, as its authors write it."""
        return _TOOL.get(self.source, self.source)

    @property
    def total(self) -> int:
        return self.checked

    @property
    def written(self) -> bool:
        """Whether the store changed: nothing is written in a dry run or when one is refused."""
        changed = self.imported or self.updated or self.retired or self.proposed
        return not self.dry_run and bool(changed)

    def first_refusal(self) -> str | None:
        """One sentence: how many were refused and why the first one was."""
        if not self.refused:
            return None
        first = self.refused[0]
        reason = first.reason.rstrip(".")
        left = "the rest" if self.imported or self.updated or self.proposed else "nothing else"
        return (
            f"{len(self.refused)} of {self.total} {self.what} were refused ({left} was "
            f"{'checked' if self.dry_run else 'imported'}); the first, {first.source_id} in "
            f"{first.where}: {reason}. Fix {'it' if len(self.refused) == 1 else 'them'} in the "
            "source, then run the import again."
        )

    def view(self) -> dict[str, Any]:
        """The report for scripts (`--json`); a refused import also carries the error object
        every command prints under --json."""
        view: dict[str, Any] = {
            "source": self.source,
            "folder": self.folder,
            "project": self.project,
            "dry_run": self.dry_run,
            "written": self.written,
            "counts": {
                "entries": self.total,
                "imported": len(self.imported),
                "proposed": len(self.proposed),
                "updated": len(self.updated),
                "already_stored": len(self.already_stored),
                "refused": len(self.refused),
            },
            "imported": [
                {
                    "source_id": i.source_id,
                    "file": i.where,
                    "id": i.record_id,
                    "kind": str(i.kind),
                    "category": i.category,
                    "status": str(i.status),
                    "title": i.title,
                }
                for i in self.imported
            ],
            "proposed": [
                {"source_id": i.source_id, "file": i.where, "draft": i.record_id, "title": i.title}
                for i in self.proposed
            ],
            "updated": [
                {"source_id": i.source_id, "file": i.where, "id": i.record_id, "title": i.title}
                for i in self.updated
            ],
            "already_stored": [
                {"source_id": a.source_id, "file": a.where, "id": a.record_id}
                for a in self.already_stored
            ],
            "refused": [
                {"source_id": r.source_id, "file": r.where, "field": r.field, "reason": r.reason}
                for r in self.refused
            ],
            "superseded_existing": [
                {"id": r.record_id, "superseded_by": r.successor_id} for r in self.retired
            ],
            "notes": list(self.notes),
        }
        refusal = self.first_refusal()
        if refusal is not None:
            view["error"] = {
                "message": refusal,
                "type": "ImportRefused",
                "field": self.refused[0].field,
            }
        return view
