"""Changes an agent asks for to stored records (update, append, link, supersede, archive,
delete): made at once, or, while `[capture] review` holds what agents write, checked as the
change would be and kept in the review queue beside new records. The record stays as a person
approved it until a person approves the change (ReviewQueue.approve makes it then)."""

from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import Struct

from contextd.core.reading.reader import RecordReader
from contextd.core.writing.review import Held, ReviewQueue
from contextd.core.writing.validation import checked_text
from contextd.errors import ConflictError
from contextd.ids import new_id
from contextd.models import Record, RecordEdit, Status

if TYPE_CHECKING:  # the MCP server reads this module at start; the write path loads on use
    from contextd.core.writing.writer import RecordWriter

__all__ = ["AgentChanges", "Changed", "apply_held"]


class Changed(Struct, frozen=True):
    """What became of an agent's change: `record` as it is now (unchanged when `held`)."""

    record: Record
    held: Held | None = None
    successor: Record | None = None  # a supersede's newer record


class AgentChanges:
    def __init__(
        self,
        reader: RecordReader,
        writer: "RecordWriter",
        review: ReviewQueue,
        *,
        holds: bool,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._review = review
        self._holds = holds  # the review policy holds what agents write

    def update(self, reference: str, edit: RecordEdit, force: bool = False) -> Changed:
        if not self._holds:
            return Changed(self._writer.update(reference, edit, force=force))
        prepared = self._writer.prepare_update(reference, edit, force=force)
        payload = {"edit": msgspec.to_builtins(edit), "force": force}
        return self._hold("update", prepared.before or prepared.record, payload, prepared.record)

    def append(self, reference: str, text: str, field: str | None) -> Changed:
        if not self._holds:
            return Changed(self._writer.append(reference, text, field))
        prepared = self._writer.prepare_append(reference, text, field)
        payload = {"text": text, "field": field}
        return self._hold("append", prepared.before or prepared.record, payload, prepared.record)

    def link(self, reference: str, other: str) -> Changed:
        if not self._holds:
            return Changed(self._writer.link(reference, other))
        record = self._reader.get(reference)
        target = self._reader.get(other)
        linked = msgspec.structs.replace(record, related_to=(*record.related_to, target.id))
        return self._hold("link", record, {"to": target.id}, linked)

    def supersede(self, old_reference: str, new_reference: str) -> Changed:
        if not self._holds:
            old, new = self._writer.supersede(old_reference, new_reference)
            return Changed(old, successor=new)
        old, new = self._writer.supersession(old_reference, new_reference)
        retired = msgspec.structs.replace(old, status=Status.SUPERSEDED, superseded_by=new.id)
        changed = self._hold("supersede", old, {"by": new.id}, retired)
        return Changed(old, changed.held, successor=new)

    def archive(self, reference: str, reason: str | None) -> Changed:
        if not self._holds:
            return Changed(self._writer.archive(reference, reason))
        prepared = self._writer.prepare_archive(reference, reason)
        checked = checked_text("reason", reason or "", label="archive reason")
        payload = {"reason": checked}
        return self._hold("archive", prepared.before or prepared.record, payload, prepared.record)

    def delete(self, reference: str) -> Changed:
        if not self._holds:
            return Changed(self._writer.delete(reference))
        record = self._reader.get(reference)
        return self._hold("delete", record, {}, record)

    def _hold(
        self, request: str, record: Record, payload: dict[str, Any], after: Record
    ) -> Changed:
        """Keep the change for a person; `after` is the record as it would leave it."""
        waiting = [
            h
            for h in self._review.waiting_changes(record.id)
            if h.request == request and h.payload == payload
        ]
        if waiting:  # asked again: the same change waits once
            return Changed(record, waiting[0])
        draft = msgspec.structs.replace(after.as_draft(), asked_by="agent")
        held = self._review.hold(
            draft, new_id(), record.project_id, request=request, target=record.id, payload=payload
        )
        return Changed(record, held)


def apply_held(writer: "RecordWriter", held: Held) -> Record:
    """Make a held change to a stored record, checked again as any change is.

    Raises:
        ConflictError: the change is of a kind this contextd does not know.
    """
    target, payload = held.target or "", held.payload
    if held.request == "update":
        edit = msgspec.convert(payload["edit"], RecordEdit)
        return writer.update(target, edit, force=bool(payload.get("force")))
    if held.request == "append":
        return writer.append(target, str(payload["text"]), payload.get("field"))
    if held.request == "link":
        return writer.link(target, str(payload["to"]))
    if held.request == "supersede":
        return writer.supersede(target, str(payload["by"]))[0]
    if held.request == "archive":
        return writer.archive(target, payload.get("reason") or None)
    if held.request == "delete":
        return writer.delete(target)
    raise ConflictError(f"A held change of kind {held.request!r} is not one this contextd makes.")
