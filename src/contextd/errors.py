"""The one exception tree of contextd; every class carries the CLI exit code it maps to.

* ContextdError                    exit 1
  + InvalidInputError              exit 2   (a value a user typed is wrong)
    - ValidationError              exit 2   (a record field is missing, too short or malformed)
    - InvalidQueryError            exit 2   (a search query or filter cannot be used)
    - AmbiguousIdError             exit 2   (a handle or id prefix fits several records)
  + NotFoundError                  exit 3   (record, project)
    - ProjectNotResolvedError      exit 3   (no project given and none attached here)
  + ConflictError                  exit 4   (the change clashes with the record's current state)
    - DuplicateError               exit 4   (the new record restates a stored one)
  + ConfigError                    exit 5   (config.toml unreadable or wrong)
  + ProviderUnavailableError       exit 5   (embedding model, endpoint or key missing)
    - BadReplyError                exit 5   (an endpoint answered, but not what was asked)
  + StoreError                     exit 6   (the database cannot be opened or written)
    - SchemaTooNewError            exit 6
    - UnknownOutcomeError          exit 6   (a write's answer never came: maybe stored)
  + RemoteError                    exit 7   (ssh or contextd on another machine failed)
"""

from collections.abc import Mapping
from typing import ClassVar

__all__ = [
    "AmbiguousIdError",
    "BadReplyError",
    "ConfigError",
    "ConflictError",
    "ContextdError",
    "DuplicateError",
    "InvalidInputError",
    "InvalidQueryError",
    "NotFoundError",
    "ProviderUnavailableError",
    "ProjectNotResolvedError",
    "RemoteError",
    "SchemaTooNewError",
    "StoreError",
    "UnknownOutcomeError",
    "ValidationError",
    "as_clause",
    "from_facts",
]


class ContextdError(Exception):
    """Root of every error contextd reports to a user; the message is one clear sentence of
    facts. What to do next is `actions`: names each surface words its own way (the CLI as
    commands and flags, MCP as tools and parameters), about `record_id` when there is one."""

    exit_code: ClassVar[int] = 1

    def __init__(
        self, message: str, *, actions: tuple[str, ...] = (), record_id: str | None = None
    ) -> None:
        super().__init__(message)
        self.actions = actions
        self.record_id = record_id

    def facts(self) -> dict[str, object]:
        """The error as data, to cross the daemon's socket: its class, sentence and facts; the
        client rebuilds it with `from_facts` and words it as the in-process command would."""
        return {
            "type": type(self).__name__,
            "message": str(self),
            "actions": list(self.actions),
            "record_id": self.record_id,
            "problems": [list(p) for p in getattr(self, "problems", [])],
        }

    def worded(self, words: Mapping[str, str], message: str | None = None) -> str:
        """`message` (by default the error's own) followed by its actions, each worded from
        `words` (a surface's: commands and flags, or tools and parameters)."""
        text = str(self) if message is None else message
        advice = [words[a].format(id=self.record_id) for a in self.actions if a in words]
        if not advice:
            return text
        joined = advice[0] if len(advice) == 1 else ", ".join(advice[:-1]) + ", or " + advice[-1]
        return f"{text.rstrip('.')}: {joined}."


class InvalidInputError(ContextdError):
    """A value the user gave cannot be used."""

    exit_code = 2


class ValidationError(InvalidInputError):
    """Record fields are missing, too short or malformed: every one found, so a caller fixes
    them in one round; `field` is the first."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.problems: list[tuple[str, str]] = [(field, message)]

    @classmethod
    def several(cls, problems: list[tuple[str, str]]) -> "ValidationError":
        """One error for every (field, message) found."""
        if len(problems) == 1:
            return cls(*problems[0])
        joined = " ".join(message for _, message in problems)
        error = cls(problems[0][0], f"{len(problems)} fields need work: {joined}")
        error.problems = list(problems)
        return error


class InvalidQueryError(InvalidInputError):
    """A search query or filter cannot be used."""


class AmbiguousIdError(InvalidInputError):
    """A name (handle or id prefix) fits more than one record or session: nothing is done, and
    the candidates are listed so the person can name one."""

    def __init__(self, reference: str, candidates: list[str], total: int, noun: str) -> None:
        shown = reference if reference.isprintable() else repr(reference)
        more = total - len(candidates)
        listed = "; ".join(candidates) + (f"; and {more} more" if more else "")
        super().__init__(
            f"{shown[:40]!r} fits {total} {noun}, so nothing was done; name one by "
            f"{'its handle or by ' if noun.endswith('records') else ''}more of its id: {listed}."
        )
        self.candidates = candidates


class NotFoundError(ContextdError):
    """A record or project does not exist."""

    exit_code = 3


class ProjectNotResolvedError(NotFoundError):
    """No project was named and none is attached at the current directory."""


class ConflictError(ContextdError):
    """The change clashes with the current state of a record."""

    exit_code = 4


class DuplicateError(ConflictError):
    """A new record restates one already stored (active, superseded or archived)."""

    def __init__(self, existing_id: str, message: str, actions: tuple[str, ...]) -> None:
        super().__init__(message, actions=actions, record_id=existing_id)
        self.existing_id = existing_id


class ConfigError(ContextdError):
    """The configuration file cannot be read or holds a wrong value."""

    exit_code = 5


class StoreError(ContextdError):
    """The database cannot be opened, read or written."""

    exit_code = 6


class SchemaTooNewError(StoreError):
    """The database was written by a newer contextd."""


class UnknownOutcomeError(StoreError):
    """A write was sent to be committed and its answer never came (the connection broke):
    it may or may not have been stored, so it is not a failure to simply do again."""


class ProviderUnavailableError(ContextdError):
    """An embedding provider, chat endpoint or vector store cannot be used (missing package,
    key, server)."""

    exit_code = 5


class BadReplyError(ProviderUnavailableError):
    """An endpoint (a chat model) answered, but not in the shape asked for: the next question
    may fare better, unlike an endpoint that cannot be reached."""


class DaemonError(ContextdError):
    """The daemon could not be started or reached."""

    exit_code = 5


class RemoteError(ContextdError):
    """Reaching another machine failed: ssh itself, or contextd there."""

    exit_code = 7


def as_clause(error: Exception) -> str:
    """An error's sentence as a clause to follow a subject ("x.md: its title is missing")."""
    text = str(error).rstrip(".")
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def from_facts(facts: Mapping[str, object]) -> ContextdError:
    """The error `ContextdError.facts` described, of its own class (a class this code does not
    know becomes a ContextdError with the same sentence)."""
    known = {c.__name__: c for c in _classes(ContextdError)}
    cls = known.get(str(facts.get("type")), ContextdError)
    error = cls.__new__(cls)
    Exception.__init__(error, str(facts.get("message", "")))
    actions = facts.get("actions")
    error.actions = tuple(str(a) for a in actions) if isinstance(actions, list) else ()
    record_id = facts.get("record_id")
    error.record_id = str(record_id) if record_id else None
    problems = facts.get("problems")
    if isinstance(error, ValidationError):
        listed = problems if isinstance(problems, list) else []
        error.problems = [
            (str(p[0]), str(p[1])) for p in listed if isinstance(p, list) and len(p) == 2
        ]
        error.field = error.problems[0][0] if error.problems else ""
    if isinstance(error, DuplicateError):
        error.existing_id = error.record_id or ""
    return error


def _classes(root: type[ContextdError]) -> list[type[ContextdError]]:
    found = [root]
    for sub in root.__subclasses__():
        found += _classes(sub)
    return found
