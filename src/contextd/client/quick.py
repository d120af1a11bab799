"""The hot commands (`search`, `recall`, `add`, `decide`, ...) answered by a running daemon,
before click, the store or numpy are imported: a warm answer is the whole point.

The argv is read with the commands' own table (contextd.client.commands), which builds the
request the in-process command builds too; the daemon answers it with the code the command
would run (contextd.service.answer), and this prints the answer, or the daemon's refusal in
the CLI's words, with the code the in-process command prints with: both print the same bytes.
When there is no daemon to answer (none runs, it declined, help or anything click must read,
CONTEXTD_DEBUG), nothing is printed and the CLI runs the command itself.
"""

import os
import sys
from typing import Any

from contextd.client import commands
from contextd.client.results import answer_printout
from contextd.errors import ContextdError, from_facts
from contextd.home_folder import resolve_home
from contextd.text.printer import Printout, use_colour, write
from contextd.text.words import refusal_printout
from contextd.wire import to_daemon
from contextd.wire.rendezvous import Unsafe

__all__ = ["answer", "place"]

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
    parsed = commands.parse(argv)
    if parsed is None:
        return None
    command, values = commands.COMMANDS[parsed.command], parsed.values
    use_colour(str(values["color"] or "auto"))
    where = place(values["home"], values["project"])
    if where is None:
        return None
    as_json, writes = bool(values["json"]), command.asks == "write"
    reply: dict[str, Any] | None = None
    try:
        try:
            asked = commands.request(command, parsed.argument, values, where)
        except ContextdError as exc:  # refused before asking, as the command in process is
            return _printed(refusal_printout(exc, as_json), exc.exit_code)
        reply = _ask(asked, repeatable=not writes)
        if reply is None:
            return None
        refused = reply.get("refused")
        if isinstance(refused, dict):
            error = from_facts(refused)
            return _printed(refusal_printout(error, as_json), error.exit_code)
        explain = bool(values.get("explain"))
        return _printed(answer_printout(command.asks, reply, explain, as_json), 0)
    except to_daemon.Unanswered:
        sys.stderr.write(UNCERTAIN_WRITE.format(what="did not answer in time"))
        return 5  # as DaemonError
    except (KeyError, TypeError):  # an answer of another shape
        if writes and reply is not None and "written" in reply:  # stored: never twice
            sys.stderr.write(UNCERTAIN_WRITE.format(what="its answer could not be printed"))
            return 5
        return None  # nothing was printed: the command runs in process, and says why


def place(home: object, project: object) -> dict[str, object] | None:
    """Where a request comes from: the home, the code stamp, the project asked for by name
    (--project, else $CONTEXTD_PROJECT) and this folder; None when click must say what is
    wrong with them."""
    try:
        folder = os.getcwd()
    except OSError:
        return None
    resolved = resolve_home(str(home) if home else None)
    if os.path.exists(resolved) and not os.path.isdir(resolved):
        return None  # a file is no home: click's path says so
    return {
        "home": resolved,
        "stamp": to_daemon.code_stamp(),
        "project": project or os.environ.get("CONTEXTD_PROJECT") or None,
        "folder": folder,
    }


def _ask(request: dict[str, object], *, repeatable: bool) -> dict[str, Any] | None:
    try:
        reply = to_daemon.ask(str(request["home"]), request, repeatable=repeatable)
    except Unsafe as exc:
        sys.stderr.write(f"contextd: {exc} Answering without the daemon.\n")
        return None
    return reply[0] if reply is not None else None


def _printed(printout: Printout, code: int) -> int:
    """Print it; `code` once printed."""
    try:
        write(printout)
    except BrokenPipeError:  # the reader went away (`| head`): end quietly, as the CLI does
        sys.stderr.close()
    return code
