"""Hand edits of the mirror turned into record changes: a new section is added, a changed
one updated (through the normal update path), a removed one archived — all of them in one
transaction, or none."""

from collections.abc import Callable, Iterable
from typing import TypeVar

from msgspec import Struct

from contextd.core.writing.validation import validate_draft
from contextd.core.writing.writer import PreparedWrite, RecordWriter
from contextd.errors import (
    ConflictError,
    ContextdError,
    DuplicateError,
    InvalidInputError,
    ValidationError,
)
from contextd.mirror.layout import GROUPS
from contextd.mirror.manifest import Manifest
from contextd.mirror.parse import Section, group_named, section_draft
from contextd.models import Kind, Project, Record, RecordDraft, RecordEdit, Status, body_to_dict

__all__ = ["Change", "FolderEdits", "apply_changes", "plan_changes"]

Lookup = Callable[[str], Record | None]
T = TypeVar("T")


class FolderEdits(Struct, frozen=True):
    """One mirror folder as a person left it."""

    key: str  # "projects/<slug>" or "global"
    project: Project | None
    manifest: Manifest | None
    sections: list[Section]
    scope: list[Record]  # the folder's active records, to recognise a re-added title


class Change(Struct, frozen=True):
    action: str  # "add" | "update" | "archive"
    folder: str
    file: str
    title: str
    record_id: str | None = None
    draft: RecordDraft | None = None
    edit: RecordEdit | None = None
    fields: tuple[str, ...] = ()
    project: Project | None = None
    line: int = 0  # of the section's `### ` heading (0: the section was removed)


def plan_changes(folders: Iterable[FolderEdits], lookup: Lookup) -> list[Change]:
    """The record changes the folders' hand edits stand for, in file order.

    Raises:
        ValidationError: a new or changed section breaks its kind's rules (nothing is changed).
        InvalidInputError: a new section sits under a heading contextd does not know, or two
            sections stand for the same record.
    """
    folders = list(folders)
    seen = {s.record_id for f in folders for s in f.sections if s.record_id}
    changes: list[Change] = []
    for folder in folders:
        written = _written_sections(folder.manifest)
        for section in folder.sections:
            if section.record_id and written.get(section.record_id) == section.digest:
                continue
            change = _section_change(folder, section, lookup)
            if change is not None:
                _refuse_twice(changes, change)
                changes.append(change)
        for record_id, name in _written_files(folder.manifest).items():
            record = None if record_id in seen else lookup(record_id)
            if record is not None and record.status is Status.ACTIVE:
                changes.append(
                    Change("archive", folder.key, name, record.title, record.id, project=None)
                )
    return changes


def apply_changes(records: RecordWriter, changes: list[Change]) -> list[Record]:
    """Check every planned change, then write them all in one transaction: a refused change
    leaves the store as it was, and the error names its section."""
    prepared = [_prepared(records, change) for change in changes]
    _refuse_restatements(records, changes, prepared)
    return records.write_all(prepared)


def _refuse_restatements(
    records: RecordWriter, changes: list[Change], prepared: list[PreparedWrite]
) -> None:
    """Two new sections saying nearly the same thing would each pass the duplicate check
    against the store, so they are compared with each other."""
    added = [(c, p) for c, p in zip(changes, prepared, strict=True) if c.action == "add"]
    for index, (change, write) in enumerate(added):
        for earlier, earlier_write in added[:index]:
            if records.restate_each_other(earlier_write, write):
                raise InvalidInputError(
                    f"Adopted nothing: the new sections {_clip(earlier.title)!r} "
                    f"({earlier.folder}/{earlier.file}, line {earlier.line}) and "
                    f"{_clip(change.title)!r} ({change.folder}/{change.file}, line {change.line})"
                    " say nearly the same thing; keep one of them, then run "
                    "`contextd sync --adopt` again."
                )


def _prepared(records: RecordWriter, change: Change) -> PreparedWrite:
    try:
        if change.action == "add" and change.draft is not None:
            return records.prepare_create(change.draft, change.project)
        if change.action == "update" and change.record_id and change.edit is not None:
            return records.prepare_update(change.record_id, change.edit)
        assert change.record_id is not None
        return records.prepare_archive(change.record_id)
    except ContextdError as exc:
        raise _refusal(change, exc) from exc


def _refusal(change: Change, exc: ContextdError) -> ContextdError:
    line = f", line {change.line}" if change.line else ""
    verb = {"add": "adding", "update": "updating", "archive": "archiving"}[change.action]
    if isinstance(exc, DuplicateError):
        reason = (
            f"it repeats the stored record {exc.existing_id} (`contextd show "
            f"{exc.existing_id}` shows it)"
        )
    else:
        reason = str(exc).rstrip(".")
    message = (
        f"Adopted nothing: {verb} {_clip(change.title)!r} ({change.folder}/{change.file}{line}) "
        f"was refused because {reason[:1].lower()}{reason[1:]}; fix or remove that section, "
        "then run `contextd sync --adopt` again."
    )
    if isinstance(exc, ConflictError):
        return ConflictError(message)
    return InvalidInputError(message)


def _refuse_twice(planned: list[Change], change: Change) -> None:
    """Two sections standing for one record (or one new record twice) cannot both be adopted."""
    for earlier in planned:
        same_record = change.record_id is not None and change.record_id == earlier.record_id
        same_new = (
            change.draft is not None
            and earlier.draft is not None
            and change.folder == earlier.folder
            and change.draft.kind is earlier.draft.kind
            and change.draft.title.lower() == earlier.draft.title.lower()
        )
        if same_record or same_new:
            raise InvalidInputError(
                f"In {change.folder}, the sections on line {earlier.line} of {earlier.file} "
                f"and line {change.line} of {change.file} stand for the same record "
                f"({_clip(change.title)!r}); keep one of them, then run `contextd sync --adopt` "
                "again."
            )


def _section_change(folder: FolderEdits, section: Section, lookup: Lookup) -> Change | None:
    record = lookup(section.record_id) if section.record_id else None
    if section.record_id and record is None:
        return None  # the record was deleted since; its section goes at the next sync
    kind = record.kind if record is not None else _new_kind(folder, section)
    draft = _validated(folder, section, kind)
    if record is None:
        record = _same_title(folder.scope, draft)
    if record is None:
        return Change(
            "add",
            folder.key,
            section.file,
            draft.title,
            draft=draft,
            project=folder.project,
            line=section.line,
        )
    edit, changed = _edit(record, draft)
    if not changed:
        return None
    return Change(
        "update",
        folder.key,
        section.file,
        record.title,
        record.id,
        edit=edit,
        fields=changed,
        line=section.line,
    )


def _new_kind(folder: FolderEdits, section: Section) -> Kind:
    group = group_named(section.group)
    if group is None:
        known = ", ".join(f"'## {g.heading}'" for g in GROUPS)
        raise InvalidInputError(
            f"In {folder.key}/{section.file}, the new section on line {section.line} is under "
            f"'## {section.group}', which says nothing about its kind; move it under one of "
            f"{known}."
        )
    return group.kind


def _validated(folder: FolderEdits, section: Section, kind: Kind) -> RecordDraft:
    try:
        return validate_draft(section_draft(section, kind, is_global=folder.project is None))
    except ValidationError as exc:
        raise ValidationError(
            exc.field, f"In {folder.key}/{section.file}, the section on line {section.line}: {exc}"
        ) from exc


def _same_title(scope: list[Record], draft: RecordDraft) -> Record | None:
    title = draft.title.lower()
    return next((r for r in scope if r.kind is draft.kind and r.title.lower() == title), None)


def _edit(record: Record, draft: RecordDraft) -> tuple[RecordEdit, tuple[str, ...]]:
    old, new = body_to_dict(record.body), body_to_dict(draft.body)
    body = {name: value for name, value in new.items() if old.get(name) != value}
    memory = record.kind is Kind.MEMORY
    edit = RecordEdit(
        title=_changed(draft.title, record.title),
        category=_changed(draft.category, record.category) if memory else None,
        tags=_changed(draft.tags, record.tags),
        retrieval_hints=_changed(draft.retrieval_hints, record.retrieval_hints),
        priority=_changed(draft.priority, record.priority),
        body=body,
    )
    named = tuple(n for n in _EDITABLE if getattr(edit, n) is not None) + tuple(body)
    return edit, named


_EDITABLE = ("title", "category", "tags", "retrieval_hints", "priority")


def _changed(new: T, old: T) -> T | None:
    return new if new != old else None


def _written_sections(manifest: Manifest | None) -> dict[str, str]:
    if manifest is None:
        return {}
    return {rid: digest for ids in manifest.sections.values() for rid, digest in ids.items()}


def _written_files(manifest: Manifest | None) -> dict[str, str]:
    return manifest.section_ids() if manifest is not None else {}


def _clip(text: str, width: int = 50) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
