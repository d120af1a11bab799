"""Tools that change records: update, append, link, supersede, archive, delete, verify, and
learn which record answered a query."""

from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.types import CallToolResult
from pydantic import Field

from contextd.core.reading.views import record_view
from contextd.core.recall.presentation import one_line
from contextd.fields import KINDS, text_fields
from contextd.mcp import outputs as out
from contextd.mcp.connection import Here
from contextd.mcp.project import NOWHERE, ProjectArg
from contextd.mcp.render import held_text, reply
from contextd.mcp.toolkit import (
    DESTROY,
    HELD,
    WRITE,
    Force,
    Hints,
    Priority,
    RecordId,
    Related,
    Tags,
    Toolkit,
)
from contextd.models import Kind, RecordEdit

__all__ = ["register"]

# The text fields `append` adds to, any kind's (the writer says which a record has).
_TEXT_FIELDS = tuple(dict.fromkeys(name for kind in Kind for name in text_fields(kind)))
_MAINS = "(" + ", ".join(f"a {k}'s {s.main}" for k, s in KINDS.items() if k != "memory") + ")."
if TYPE_CHECKING:
    TextField = str
else:
    TextField = Literal[_TEXT_FIELDS]


def register(kit: Toolkit) -> None:
    app = kit.app

    @kit.tool(WRITE)
    def update_entry(
        id: RecordId,
        title: Annotated[str | None, Field(description="A new title (one line).")] = None,
        category: Annotated[str | None, Field(description="A new memory category.")] = None,
        tags: Tags | None = None,
        retrieval_hints: Hints | None = None,
        related_to: Related | None = None,
        priority: Priority | None = None,
        fields: Annotated[
            dict[str, Any] | None,
            Field(
                description=f'Kind fields to change, e.g. {{"{KINDS["decision"].main}": "..."}}.'
            ),
        ] = None,
        force: Force = False,
    ) -> Annotated[CallToolResult, out.Written]:
        """Change a record; the same rules as when it was recorded apply."""
        edit = RecordEdit(
            title=title,
            category=category,
            tags=None if tags is None else tuple(tags),
            retrieval_hints=None if retrieval_hints is None else tuple(retrieval_hints),
            related_to=None if related_to is None else tuple(related_to),
            priority=priority,
            body=dict(fields or {}),
        )
        return kit.written(app.agent_changes.update(id, edit, force=force), "Updated")

    @kit.tool(WRITE)
    def append(
        id: RecordId,
        text: Annotated[str, Field(description="What to add, in sentences that stand alone.")],
        field: Annotated[
            TextField | None,
            Field(
                description="The text field to add to; by default the record's main one " + _MAINS
            ),
        ] = None,
    ) -> Annotated[CallToolResult, out.Written]:
        """Add what you learned to a record (and mark it verified today), instead of storing
        a second record about the same thing."""
        return kit.written(app.agent_changes.append(id, text, field), "Appended to")

    @kit.tool(WRITE)
    def link(
        id: RecordId,
        to: Annotated[str, Field(description="The record it relates to (id or prefix).")],
    ) -> Annotated[CallToolResult, out.RecordOut]:
        """Relate a record to another, so retrieving one brings the other along."""
        return kit.changed(app.agent_changes.link(id, to), f"Linked to {to}")

    @kit.tool(WRITE)
    def supersede(
        old_id: Annotated[str, Field(description="The record that no longer holds.")],
        new_id: Annotated[str, Field(description="The record that replaces it.")],
    ) -> Annotated[CallToolResult, out.Superseded]:
        """Mark an older record as replaced by a newer one (it becomes NOT CURRENT)."""
        changed = app.agent_changes.supersede(old_id, new_id)
        old, new = changed.record, changed.successor
        assert new is not None  # a supersede always names its successor
        data = {"superseded": record_view(old), "by": record_view(new)}
        if changed.held is not None:
            return reply(data | HELD, held_text("supersede", old))
        return reply(
            data,
            f"{old.id} {one_line(old.title)} is now NOT CURRENT; current: {new.id} "
            f"{one_line(new.title)}",
        )

    @kit.tool(WRITE)
    def archive(
        id: RecordId,
        reason: Annotated[str, Field(description="Why it no longer applies.")] = "",
    ) -> Annotated[CallToolResult, out.RecordOut]:
        """Take a record that no longer applies out of retrieval (reversible), saying why."""
        return kit.changed(app.agent_changes.archive(id, reason), "Archived")

    @kit.tool(DESTROY)
    def delete(id: RecordId) -> Annotated[CallToolResult, out.Deleted]:
        """Delete a record for good (a tombstone remembers the deletion)."""
        changed = app.agent_changes.delete(id)
        record = changed.record
        data = {"deleted": record.id, "title": record.title}
        if changed.held is not None:
            return reply(data | HELD, held_text("delete", record))
        return reply(data, f"Deleted: {record.id} {one_line(record.title)}")

    @kit.tool(WRITE)
    def verify_entry(id: RecordId) -> Annotated[CallToolResult, out.RecordOut]:
        """Confirm a record is still true today."""
        return kit.changed(app.writer.verify(id), "Verified")

    @kit.tool(WRITE)
    def learn(
        query: Annotated[str, Field(description="The question the record answered.")],
        id: Annotated[str, Field(description="The record that was the right answer.")],
        project: ProjectArg = None,
        here: Here = NOWHERE,
    ) -> Annotated[CallToolResult, out.Learned]:
        """Mark a result as the right answer for a query: it comes first when that query is
        asked again, and ranks higher for similar ones. Call it when get_context found what
        you needed below the first result."""
        record = app.reader.get(id)
        app.search.learn(here.project(), query, record)
        data = {"learned": record.id, "query": query}
        return reply(data, f"Learned: {record.id} answers the query.")
