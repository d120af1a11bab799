"""The only code that prints: JSON for scripts, aligned text for people (and the one that
asks them before a change that cannot be undone)."""

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from contextd.cli._context import state
from contextd.cli._pager import paged
from contextd.client.results import write_printout
from contextd.clock import age
from contextd.core.reading.views import NOT_CURRENT, written_view
from contextd.errors import InvalidInputError
from contextd.fields import body_fields
from contextd.models import Kind, Record, Similar, Status
from contextd.text.printer import (
    echo,
    json_text,
    kind_cell,
    state_cell,
    style,
    table_lines,
    write,
)

if TYPE_CHECKING:  # types only: a write never loads the reader
    from contextd.core.reading.reader import RecordDetail

__all__ = [
    "KIND_HEADINGS",
    "confirm",
    "emit",
    "limit_option",
    "more_note",
    "record_block",
    "record_row",
    "report_write",
    "table",
    "warn",
]

F = TypeVar("F", bound=Callable[..., Any])


def confirm(question: str, *, without_terminal: str) -> None:
    """Go on only if the person at the terminal says yes to `question`; with no terminal to
    ask, refuse with `without_terminal` (which names the flag that confirms instead).

    Raises:
        InvalidInputError: no terminal.
        click.Abort: the answer was no.
    """
    if not sys.stdin.isatty():
        raise InvalidInputError(without_terminal)
    if not click.confirm(question, default=False, err=True):
        raise click.Abort()


KIND_HEADINGS = {
    Kind.MEMORY: "Memories",
    Kind.DECISION: "Decisions",
    Kind.CONSTRAINT: "Constraints",
    Kind.PIPELINE: "Pipelines",
    Kind.CHECKPOINT: "Checkpoints",
}


def emit(payload: dict[str, Any], human: Callable[[], None], *, long: bool = False) -> None:
    """Print `payload` as JSON under --json, else let `human` print text; a `long` listing
    goes through the pager on a terminal (contextd.cli._pager)."""
    if state().json:
        echo(json_text(payload, indent=2))
    elif long:
        paged(human)
    else:
        human()


def limit_option(default: int | None = None) -> Callable[[F], F]:
    """--limit N on a listing: at most N entries (default: every one, or `default`)."""
    return click.option(
        "--limit",
        type=click.IntRange(min=1),
        default=default,
        show_default=default is not None,
        help="Show at most this many." + ("" if default else " (default: all)"),
    )


def more_note(shown: int, total: int) -> None:
    """After a listing cut by --limit: how many were left out (on stderr)."""
    if total > shown:
        echo(f"{total - shown} more not shown; raise --limit to see them.", err=True)


def report_write(
    verb: str, record: Record, similar: Sequence[Similar], shorts: dict[str, str]
) -> None:
    """A stored record, with the similar ones it may restate or contradict (advisory)."""
    write(write_printout(verb, written_view(record, similar), shorts, state().json))


def warn(message: str) -> None:
    echo(style(message, fg="yellow"), err=True)


def kind_label(record: Record) -> str:
    label = str(record.kind) if record.kind is not Kind.MEMORY else (record.category or "memory")
    return kind_cell(str(record.kind), label)


def status_label(record: Record) -> str:
    if record.status is Status.SUPERSEDED:
        return state_cell(NOT_CURRENT)
    return state_cell("archived") if record.status is Status.ARCHIVED else ""


def record_row(record: Record, short_id: str, *, extra: str = "", tier: str = "") -> list[str]:
    """`tier`: whose record it is as the listing project sees it ("group" is labelled)."""
    scope = "global" if record.is_global else "group" if tier == "group" else ""
    return [
        style(short_id, fg="bright_black"),
        kind_label(record),
        " ".join(x for x in (status_label(record), scope) if x),
        record.title,
        extra,
    ]


def table(rows: Sequence[list[str]], clip_column: int | None = 3) -> None:
    """Print rows as aligned columns; one column (the title) is clipped to the terminal width."""
    for line in table_lines(list(rows), clip_column):
        echo(line)


def record_block(detail: "RecordDetail", handles: dict[str, str]) -> None:
    """A record in full, for `show` and after a write."""
    record = detail.record
    short = handles.get(record.id, record.id)
    header = f"{style(short, bold=True)}  {kind_label(record)}  {status_label(record)}"
    echo(header.rstrip())
    echo(style(record.title, bold=True))
    if detail.successor is not None:
        line = (
            f"Superseded by {handles.get(detail.successor.id, detail.successor.id)}: "
            f"{detail.successor.title}"
        )
        echo(style(line, fg="red"))
    if detail.current is not None:
        echo(
            style(
                f"Current: {handles.get(detail.current.id, detail.current.id)}: "
                f"{detail.current.title}",
                fg="red",
            )
        )
    if record.archived_reason:
        echo(f"Archived because: {record.archived_reason}")
    for spec in body_fields(record.kind):
        value = getattr(record.body, spec.name)
        if not value:
            continue
        if spec.many:
            echo(f"{spec.heading}:")
            numbered = spec.name == "steps"
            for i, item in enumerate(value, 1):
                echo(f"  {f'{i}.' if numbered else '-'} {item}")
        else:
            echo(f"{spec.heading}: {value}")
    for predecessor in detail.predecessors:
        echo(f"Replaces {handles.get(predecessor.id, predecessor.id)}: {predecessor.title}")
    meta = [
        f"id {record.id}",
        "global" if record.is_global else "",
        f"group {detail.group}" if detail.group else "",
        f"tags {', '.join(record.tags)}" if record.tags else "",
        f"hints {' | '.join(record.retrieval_hints)}" if record.retrieval_hints else "",
        f"related {', '.join(handles.get(r, r) for r in record.related_to)}"
        if record.related_to
        else "",
        f"origin {record.origin}, priority {record.priority}",
        f"created {record.created_at[:10]}, verified {age(record.verified_at)}",
    ]
    echo(style("  ·  ".join(m for m in meta if m), fg="bright_black"))
