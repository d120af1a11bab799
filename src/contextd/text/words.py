"""Errors in the CLI's own words: the core states facts and names what to do next; here those
become commands and flags a person types."""

from contextd.errors import ContextdError, ValidationError
from contextd.fields import flag_of
from contextd.text.printer import Printout, json_text

__all__ = ["error_printout", "in_cli_words", "refusal_printout"]

ACTIONS = {
    "update": "change it with `contextd update {id}`",
    "verify": "confirm it with `contextd verify {id}`",
    "supersede": "replace it with `contextd supersede`",
    "force": "pass --force to store it anyway",
    "show": "see `contextd show {id}`",
    "record_why": "if it is true again, record why with `contextd decide`",
    "unarchive": "bring it back with `contextd unarchive {id}`",
    "list": "`contextd memories --all` lists them",
    "attach": "run `contextd attach` in the project's folder",
    "name_project": "pass --project NAME",
    "make_global": "pass --global",
}


def in_cli_words(error: ContextdError) -> str:
    """The error's sentence, with the flags of the fields it names and the commands to run."""
    message = str(error)
    if isinstance(error, ValidationError):
        flags = [flag for field, _ in error.problems if (flag := flag_of(field)) is not None]
        if flags:
            message = f"{message} (set with {', '.join(dict.fromkeys(flags))})"
    return error.worded(ACTIONS, message)


def error_printout(message: str, kind: str, field: str | None, as_json: bool) -> Printout:
    """What a failed command prints: the sentence on stderr (one line, whatever a value quoted
    in it held), and under --json an error object on stdout too."""
    message = " ".join(message.split("\n"))
    out: Printout = []
    if as_json:
        error: dict[str, object] = {"message": message, "type": kind}
        if field:
            error["field"] = field
        out.append((1, json_text({"error": error}) + "\n"))
    out.append((2, f"Error: {message}\n"))
    return out


def refusal_printout(error: ContextdError, as_json: bool) -> Printout:
    """`error_printout` for one of contextd's own errors, in CLI words."""
    return error_printout(
        in_cli_words(error), type(error).__name__, getattr(error, "field", None), as_json
    )
