"""What every tool module shares: the annotations, the parameter types with their
descriptions, the one place a ContextdError becomes a tool error, and the replies a write
gives."""

import functools
from collections.abc import Callable
from typing import Annotated, Any, Literal, ParamSpec, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from contextd.app import App
from contextd.core.reading.views import record_view, similar_view, written_view
from contextd.core.recall.presentation import one_line
from contextd.core.writing.agent_changes import Changed
from contextd.errors import ContextdError
from contextd.fields import KINDS, RECORD_FIELDS, body_field
from contextd.limits import MAX_SEARCH_LIMIT
from contextd.mcp.listing import described
from contextd.mcp.messages import in_mcp_words
from contextd.mcp.project import NOWHERE, Place
from contextd.mcp.render import held_text, reply, written_text
from contextd.mcp.transport import REPLACEMENT
from contextd.models import Body, Kind, Origin, Record, RecordDraft

__all__ = [
    "DESTROY",
    "HELD",
    "READ",
    "WRITE",
    "Force",
    "GroupArg",
    "Hints",
    "KindArg",
    "Limit",
    "OriginArg",
    "RecordId",
    "Priority",
    "Related",
    "Supersedes",
    "Tags",
    "Toolkit",
    "about",
    "title_about",
]

P = ParamSpec("P")
R = TypeVar("R")

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
DESTROY = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)
HELD = {"held_for_review": True}  # a change kept for a person, not made

RecordId = Annotated[
    str, Field(description="A record id, its handle (D12), or a unique prefix of 8+ characters.")
]


def _record_field(name: str) -> str:
    """A field every kind carries, as the catalogue describes it (contextd.fields)."""
    return next(f for f in RECORD_FIELDS if f.name == name).help


Tags = Annotated[list[str], Field(description=_record_field("tags"))]
Hints = Annotated[list[str], Field(description=_record_field("retrieval_hints"))]
Related = Annotated[list[str], Field(description=_record_field("related_to"))]
Priority = Annotated[int, Field(ge=1, le=5, description=_record_field("priority"))]
Supersedes = Annotated[list[str], Field(description="Ids of older records this one replaces.")]
Force = Annotated[bool, Field(description="Store even if it restates a stored record.")]
GroupArg = Annotated[
    str | None,
    Field(
        description='Store it in this project group (its name, or "" for the group this '
        "project belongs to) so that it applies to every member project; the project must "
        "be a member.",
        max_length=200,
    ),
]
OriginArg = Annotated[
    Literal["user", "agent"],
    Field(
        description="Who stated it: `user` when the person you work with said it, else "
        "`agent` (retrieval trusts user over agent)."
    ),
]
KindArg = Annotated[
    Literal["memory", "decision", "constraint", "pipeline", "checkpoint"] | None,
    Field(description="Only records of this kind."),
]
Limit = Annotated[int, Field(ge=1, le=MAX_SEARCH_LIMIT, description="How many results at most.")]


def about(kind: str, name: str) -> Any:
    """A record field's description, as the catalogue gives it (contextd.fields)."""
    spec = body_field(kind, name)
    return Field(description=_record_field(name) if spec is None else spec.described)


def title_about(kind: str) -> Any:
    """What a kind's title holds."""
    return Field(description=KINDS[kind].title_help)


def domain_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """The one conversion point: a ContextdError reaches the model as readable tool text."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        if any(_holds_replacement(value) for value in (*args, *kwargs.values())):
            raise ToolError(
                "An argument holds a character that is not text (a lone UTF-16 surrogate, or "
                "bytes that are not UTF-8, shown as U+FFFD); send it again as valid UTF-8."
            )
        try:
            return fn(*args, **kwargs)
        except ContextdError as exc:
            raise ToolError(in_mcp_words(exc)) from exc

    return wrapper


def _holds_replacement(value: object) -> bool:
    """Whether a tool argument carries U+FFFD, what the transport makes of text it could not
    read (see contextd.mcp.transport)."""
    if isinstance(value, str):
        return REPLACEMENT in value
    if isinstance(value, list | tuple):
        return any(_holds_replacement(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_replacement(k) or _holds_replacement(v) for k, v in value.items())
    return False


class Toolkit:
    """One server's app and registration rules (read-only servers get the READ tools only),
    and the replies writes share."""

    def __init__(self, app: App, server: MCPServer, *, read_only: bool) -> None:
        self.app = app
        self.writes_off = app.db.read_only
        self._server = server
        self._read_only = read_only

    def tool(self, annotations: ToolAnnotations) -> Callable[[Callable[P, R]], Callable[P, R]]:
        def register(fn: Callable[P, R]) -> Callable[P, R]:
            if not (self._read_only and annotations is not READ):
                self._server.tool(description=described(fn), annotations=annotations)(
                    domain_errors(fn)
                )
            return fn

        return register

    def store(
        self,
        kind: Kind,
        title: str,
        body: Body,
        *,
        origin: str = "agent",
        category: str | None = None,
        tags: list[str] | None = None,
        hints: list[str] | None = None,
        related: list[str] | None = None,
        priority: int = 3,
        supersedes: list[str] | None = None,
        force: bool = False,
        is_global: bool = False,
        group: str | None = None,
        here: Place = NOWHERE,
    ) -> CallToolResult:
        """A new record, stored by the same writer the CLI uses (its vector and neighbour
        search computed once), and the records it resembles."""
        draft = RecordDraft(
            kind,
            title,
            body,
            category=category,
            tags=tuple(tags or ()),
            retrieval_hints=tuple(hints or ()),
            origin=Origin(origin),
            related_to=tuple(related or ()),
            priority=priority,
            is_global=is_global,
            group=group,
            asked_by="agent",
        )
        project = None if is_global else here.project()
        stored = self.app.writer.record(draft, project, force=force, supersedes=supersedes or ())
        view = written_view(stored.record, stored.similar, held=stored.held, group=stored.group)
        return reply(view, written_text(view, "Stored"))

    def written(self, changed: Changed, verb: str) -> CallToolResult:
        """A changed record, with the records it now resembles; or the change held."""
        record = changed.record
        view = record_view(record)
        if changed.held is not None:
            return reply(view | {"similar": []} | HELD, held_text(changed.held.request, record))
        view["similar"] = [similar_view(s) for s in self.app.writer.similar(record)]
        return reply(view, written_text(view, verb))

    def changed(self, changed: Changed | Record, verb: str) -> CallToolResult:
        if isinstance(changed, Record):
            changed = Changed(changed)
        record = changed.record
        view = record_view(record)
        if changed.held is not None:
            return reply(view | HELD, held_text(changed.held.request, record))
        return reply(view, f"{verb}: {record.id} {one_line(record.title)}")
