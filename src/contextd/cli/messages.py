"""Errors in the CLI's own words: the core states facts and names what to do next; here those
become commands and flags a person types."""

from contextd.errors import ContextdError, ValidationError

__all__ = ["in_cli_words"]

FLAGS = {
    "problem": "--problem",
    "why_chosen": "--why",
    "alternatives": "--alternatives",
    "what_we_tried": "--tried",
    "tradeoffs": "--tradeoffs",
    "reason": "--reason",
    "scope": "--scope",
    "triggering_incident": "--incident",
    "purpose": "--purpose",
    "steps": "--step",
    "goal": "--goal",
    "done": "--done",
    "next": "--next",
    "category": "--category",
    "priority": "--priority",
    "tags": "--tag",
    "retrieval_hints": "--hint",
}
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
        flags = [FLAGS[field] for field, _ in error.problems if field in FLAGS]
        if flags:
            message = f"{message} (set with {', '.join(dict.fromkeys(flags))})"
    return error.worded(ACTIONS, message)
