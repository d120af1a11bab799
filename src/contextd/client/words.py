"""Errors in the CLI's own words: the core states facts and names what to do next; here those
become commands and flags a person types."""

from contextd.errors import ContextdError, ValidationError
from contextd.fields import flag_of

__all__ = ["in_cli_words"]

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
