"""The typed requests the daemon answers, decoded strictly from a frame's JSON head.

A request names its kind, the home, and what the client resolved in its own process: the
project it asked for by name (--project or $CONTEXTD_PROJECT), the folder it runs in, the
query and filters, the output it wants. Nothing of the client's environment or argv crosses.

Every field is bounded, so one request is a bounded piece of work for a worker the daemon's
other clients share; a request over a bound is refused, and its client does the work itself.
"""

from typing import Annotated

import msgspec
from msgspec import Meta, Struct

from contextd.core.recall.queries import MAX_QUERY_CHARS
from contextd.core.writing.validation import MAX_TAGS
from contextd.limits import MAX_SEARCH_LIMIT
from contextd.models import Kind, RecordDraft, SearchQuery

__all__ = [
    "HookAsk",
    "McpAsk",
    "Ping",
    "RecallAsk",
    "Request",
    "SearchAsk",
    "Stop",
    "WriteAsk",
    "decode_request",
]

Path = Annotated[str, Meta(min_length=1, max_length=4096)]
Name = Annotated[str, Meta(max_length=1024)]
MAX_PROJECT_DIRS = 16  # folders an agent names for its project (CLAUDE_PROJECT_DIR...)
MAX_SUPERSEDES = 50  # records one write replaces
ProjectDirs = Annotated[tuple[Path, ...], Meta(max_length=MAX_PROJECT_DIRS)]


class Ping(Struct, frozen=True, tag="ping", tag_field="kind", forbid_unknown_fields=True):
    """Is a daemon there: its pid and uptime."""


class Stop(Struct, frozen=True, tag="stop", tag_field="kind", forbid_unknown_fields=True):
    """Finish the requests in flight, then exit."""


class HookAsk(Struct, frozen=True, tag="hook", tag_field="kind", forbid_unknown_fields=True):
    """An agent's hook: the event, and the agent's payload as the frame's body."""

    home: Path
    stamp: Name
    event: Name
    project: Name | None
    folder: Path
    # The project folders the agent named in the hook's environment (CLAUDE_PROJECT_DIR...).
    project_dirs: ProjectDirs = ()


class SearchAsk(Struct, frozen=True, tag="search", tag_field="kind", forbid_unknown_fields=True):
    """`contextd search`: the ranked hits, for the client to print."""

    home: Path
    stamp: Name
    project: Name | None
    folder: Path
    query: SearchQuery
    explain: bool = False
    json: bool = False


class RecallAsk(Struct, frozen=True, tag="recall", tag_field="kind", forbid_unknown_fields=True):
    """`contextd recall`: the passages packed into a token budget, for the client to print."""

    home: Path
    stamp: Name
    project: Name | None
    folder: Path
    query: SearchQuery
    budget: int | None = None
    explain: bool = False
    json: bool = False


class WriteAsk(Struct, frozen=True, tag="write", tag_field="kind", forbid_unknown_fields=True):
    """A CLI write (`add`, `decide`, `constrain`, `pipeline`, `checkpoint`): the draft, stored
    by the daemon's warm model under the same rules, reported back for the client to print."""

    home: Path
    stamp: Name
    project: Name | None
    folder: Path
    draft: RecordDraft
    force: bool = False
    supersedes: Annotated[tuple[Name, ...], Meta(max_length=MAX_SUPERSEDES)] = ()


class McpAsk(Struct, frozen=True, tag="mcp", tag_field="kind", forbid_unknown_fields=True):
    """`contextd mcp serve`: host an MCP session on this connection. After the daemon's ok
    reply the connection carries newline-delimited JSON-RPC both ways, relayed untouched,
    until either side closes. The place is what the relay's own in-process server would have
    read from its process: its folder, the project it was given by name (--project or
    $CONTEXTD_PROJECT), the agent's project folders (CLAUDE_PROJECT_DIR...)."""

    home: Path
    stamp: Name
    project: Name | None
    folder: Path
    project_dirs: ProjectDirs = ()
    read_only: bool = False


Request = Ping | Stop | HookAsk | SearchAsk | RecallAsk | WriteAsk | McpAsk
_DECODER = msgspec.json.Decoder(Request)


def decode_request(head: bytes) -> Request:
    """The request a frame's head holds.

    Raises:
        msgspec.DecodeError: it is not JSON, or not a request of a known kind and shape,
            or a field is over its bound (msgspec.ValidationError, a subclass, says which).
    """
    request = _DECODER.decode(head)
    if isinstance(request, SearchAsk | RecallAsk):
        _check_query(request.query)
    return request


def _check_query(query: SearchQuery) -> None:
    """SearchQuery is the core's type, shared with every caller: its bounds for a daemon's
    request are checked here, in msgspec's words."""
    bounds: list[tuple[str, int, int]] = [
        ("text", len(query.text), MAX_QUERY_CHARS),
        ("kinds", len(query.kinds), len(Kind)),
        ("tags", len(query.tags), MAX_TAGS),
        *((f"tags[{n}]", len(tag), 1024) for n, tag in enumerate(query.tags)),
        *((name, len(value or ""), 1024) for name, value in _short_fields(query)),
        ("path", len(query.path or ""), 4096),
    ]
    for name, size, most in bounds:
        if size > most:
            raise msgspec.ValidationError(f"Expected at most {most} - at `$.query.{name}`")
    if not 1 <= query.limit <= MAX_SEARCH_LIMIT:
        raise msgspec.ValidationError(
            f"Expected an int from 1 to {MAX_SEARCH_LIMIT} - at `$.query.limit`"
        )


def _short_fields(query: SearchQuery) -> list[tuple[str, str | None]]:
    return [
        ("category", query.category),
        ("since", query.since),
        ("before", query.before),
        ("dates_by", query.dates_by),
    ]
