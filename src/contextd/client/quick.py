"""`contextd search`, `contextd recall` and the record commands (`add`, `decide`, ...)
answered by a running daemon, before click, the store or numpy are imported: a warm answer is
the whole point.

The argv is read with the commands' own option tables (contextd.client.search_args and
record_args); the request names what this process resolved (the home, the project asked for
by name, its folder, the query or the draft, the output wanted) and nothing else of its
environment; the answer is printed by the code the in-process command uses
(contextd.client.results), so both print the same bytes. Whenever that cannot be done (no daemon,
help, an error to report, a write the daemon refused, CONTEXTD_DEBUG) nothing is printed and
the CLI runs the command itself.
"""

import os
import sys
from typing import Any

from contextd.client import record_args, results, search_args, to_daemon
from contextd.client.options import Parsed
from contextd.client.printer import write
from contextd.client.rendezvous import Unsafe
from contextd.home_folder import resolve_home

__all__ = ["answer"]

# A write the daemon took is never run again here: it may have been stored.
UNCERTAIN_WRITE = (
    "Error: The daemon took the write but {what}; `contextd memories` shows whether it was "
    "stored.\n"
)


def answer(argv: list[str]) -> int | None:
    """Run `contextd ARGV` on the daemon and print its answer: the exit code, or None when the
    caller must run the command in-process (nothing has been printed then)."""
    if os.environ.get("CONTEXTD_DEBUG"):
        return None  # it asks for tracebacks, which only the in-process CLI shows
    parsed = search_args.parse(argv)
    if parsed is not None:
        return _answered(_ask(_query_request(parsed), repeatable=True), parsed)
    parsed = record_args.parse(argv)
    return _written(parsed) if parsed is not None else None


def _ask(request: dict[str, object] | None, *, repeatable: bool) -> dict[str, object] | None:
    if request is None:
        return None
    try:
        reply = to_daemon.ask(str(request["home"]), request, repeatable=repeatable)
    except Unsafe as exc:
        sys.stderr.write(f"contextd: {exc} Answering without the daemon.\n")
        return None
    return reply[0] if reply is not None else None


def _answered(reply: dict[str, object] | None, parsed: Parsed) -> int | None:
    """Print a search's or recall's answer; None when there is none to print."""
    answered = reply.get("answer") if reply is not None else None
    if not isinstance(answered, dict):
        return None
    explain, as_json = bool(parsed.values["explain"]), bool(parsed.values["json"])
    render = results.search_printout if parsed.command == "search" else results.recall_printout
    try:
        write(render(answered, explain, as_json))
    except (KeyError, TypeError, ValueError):  # an answer of another shape, or unencodable
        return None
    except BrokenPipeError:  # the reader went away (`| head`): end quietly, as the CLI does
        sys.stderr.close()
    return 0


def _written(parsed: Parsed) -> int | None:
    """Have the daemon store the record and print it; None when it did not take the write
    (none runs, or a rule refused it: the command then runs, and reports, in-process)."""
    try:
        reply = _ask(_write_request(parsed), repeatable=False)
    except to_daemon.Unanswered:
        sys.stderr.write(UNCERTAIN_WRITE.format(what="did not answer in time"))
        return 5  # as DaemonError
    if reply is None:
        return None
    try:
        written: Any = reply["written"]
        as_json = bool(parsed.values["json"])
        write(results.write_printout("Recorded", written["view"], written["shorts"], as_json))
    except (KeyError, TypeError, ValueError):  # an answer of another shape, or unencodable
        sys.stderr.write(UNCERTAIN_WRITE.format(what="its answer could not be printed"))
        return 5
    except BrokenPipeError:  # the reader went away (`| head`): end quietly, as the CLI does
        sys.stderr.close()
    return 0


def _where(parsed: Parsed) -> dict[str, object] | None:
    """What every request names: the home, the project asked for, this folder."""
    values = parsed.values
    try:
        folder = os.getcwd()
    except OSError:
        return None
    home = resolve_home(str(values["home"]) if values["home"] else None)
    if os.path.exists(home) and not os.path.isdir(home):
        return None  # a file is no home: click's path says so
    return {
        "home": home,
        "stamp": to_daemon.code_stamp(),
        "project": values["project"] or os.environ.get("CONTEXTD_PROJECT") or None,
        "folder": folder,
    }


def _write_request(parsed: Parsed) -> dict[str, object] | None:
    where = _where(parsed)
    if where is None:
        return None
    values = parsed.values
    return {
        "kind": "write",
        **where,
        "draft": record_args.draft(parsed.command, parsed.argument, values),
        "force": values["force"],
        "supersedes": values["supersedes"],
    }


def _query_request(parsed: Parsed) -> dict[str, object] | None:
    where = _where(parsed)
    if where is None:
        return None
    values = parsed.values
    folder = str(where["folder"])
    since, before = _instant(values["since"]), _instant(values["before"])
    if since == "" or before == "":
        return None  # not a date: click's path says so
    query = {
        "text": parsed.argument,
        "kinds": values["kinds"],
        "tags": values["tags"],
        "category": values["category"],
        "since": since,
        "before": before,
        "dates_by": values["dates_by"] or "created",
        "path": os.path.join(folder, str(values["path"])) if values["path"] else None,
        "limit": values.get("limit") or 10,
        "include_superseded": values["include_superseded"],
        "include_archived": values["include_archived"],
        "diversify": values["diversify"],
    }
    request: dict[str, object] = {
        "kind": parsed.command,
        **where,
        "query": query,
        "explain": values["explain"],
        "json": values["json"],
    }
    if parsed.command == "recall":
        request["budget"] = values["budget"]
    return request


def _instant(text: object) -> str | None:
    """A --since/--before value as the ISO instant the store compares; "" when it is not one
    (click's path says why); None when none was given."""
    if text is None:
        return None
    from contextd.clock import parse_when, to_iso  # (re, datetime) only when a date is given
    from contextd.errors import InvalidInputError

    try:
        moment = parse_when(str(text))
    except InvalidInputError:  # a span reaching back before the year 1
        return ""
    return to_iso(moment) if moment is not None else ""
