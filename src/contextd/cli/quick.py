"""`contextd search` and `contextd recall` answered by a running daemon, before click, the
store or numpy are imported: a warm answer is the whole point.

The argv is read with the options' own table (contextd.cli.search_args); the request names
what this process resolved (the home, the project asked for by name, its folder, the query
and filters, the output wanted) and nothing else of its environment; the answer is printed
by the code the in-process command uses (contextd.cli.results), so both print the same bytes.
Whenever that cannot be done (no daemon, help, an error to report, CONTEXTD_DEBUG) nothing is
printed and the CLI runs the command itself.
"""

import os
import sys

from contextd.cli import results, search_args
from contextd.cli._text import write
from contextd.home_folder import resolve_home
from contextd.ipc import client
from contextd.ipc.rendezvous import Unsafe

__all__ = ["answer"]


def answer(argv: list[str]) -> int | None:
    """Run `contextd ARGV` on the daemon and print its answer: the exit code, or None when the
    caller must run the command in-process (nothing has been printed then)."""
    if os.environ.get("CONTEXTD_DEBUG"):
        return None  # it asks for tracebacks, which only the in-process CLI shows
    parsed = search_args.parse(argv)
    request = _request(parsed) if parsed is not None else None
    if parsed is None or request is None:
        return None
    try:
        reply = client.ask(str(request["home"]), request)
    except Unsafe as exc:
        sys.stderr.write(f"contextd: {exc} Answering without the daemon.\n")
        return None
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted.\n")
        return 130
    answered = reply[0].get("answer") if reply is not None else None
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


def _request(parsed: search_args.Parsed) -> dict[str, object] | None:
    values = parsed.values
    try:
        folder = os.getcwd()
    except OSError:
        return None
    since, before = _instant(values["since"]), _instant(values["before"])
    if since == "" or before == "":
        return None  # not a date: click's path says so
    query = {
        "text": parsed.query,
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
        "home": resolve_home(str(values["home"]) if values["home"] else None),
        "stamp": client.code_stamp(),
        "project": values["project"] or os.environ.get("CONTEXTD_PROJECT") or None,
        "folder": folder,
        "query": query,
        "explain": values["explain"],
        "json": values["json"],
    }
    if parsed.command == "recall":
        request["budget"] = values["budget"]
    return request


def _instant(text: object) -> str | None:
    """A --since/--before value as the ISO instant the store compares; "" when it is not a
    date; None when none was given."""
    if text is None:
        return None
    from contextd.clock import parse_when, to_iso  # (re, datetime) only when a date is given

    moment = parse_when(str(text))
    return to_iso(moment) if moment is not None else ""
