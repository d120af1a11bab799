"""The one exception tree of contextd; every class carries the CLI exit code it maps to.

* ContextdError                    exit 1
  + InvalidInputError              exit 2   (a value a user typed is wrong)
    - ValidationError              exit 2   (a record field is missing, too short or malformed)
    - InvalidQueryError            exit 2   (a search query or filter cannot be used)
    - AmbiguousIdError             exit 2   (an id prefix matches several records)
  + NotFoundError                  exit 3   (record, project)
    - ProjectNotResolvedError      exit 3   (no project given and none attached here)
  + ConflictError                  exit 4   (the change clashes with the record's current state)
    - DuplicateError               exit 4   (the new record restates a stored one)
  + ConfigError                    exit 5   (config.toml unreadable or wrong)
  + ProviderUnavailableError       exit 5   (embedding model, endpoint or key missing)
  + StoreError                     exit 6   (the database cannot be opened or written)
    - SchemaTooNewError            exit 6
  + RemoteError                    exit 7   (ssh or contextd on another machine failed)
"""

from typing import ClassVar

__all__ = [
    "AmbiguousIdError",
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
    "ValidationError",
]


class ContextdError(Exception):
    """Root of every error contextd reports to a user; the message is one clear sentence."""

    exit_code: ClassVar[int] = 1


class InvalidInputError(ContextdError):
    """A value the user gave cannot be used."""

    exit_code = 2


class ValidationError(InvalidInputError):
    """A record field is missing, too short or malformed."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class InvalidQueryError(InvalidInputError):
    """A search query or filter cannot be used."""


class AmbiguousIdError(InvalidInputError):
    """An id prefix matches more than one record."""

    def __init__(self, prefix: str, candidates: list[str], noun: str = "records") -> None:
        shown = ", ".join(candidates[:5])
        super().__init__(
            f"Id prefix '{prefix}' matches {len(candidates)} {noun} ({shown}); "
            "type more characters."
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

    def __init__(self, existing_id: str, message: str) -> None:
        super().__init__(message)
        self.existing_id = existing_id


class ConfigError(ContextdError):
    """The configuration file cannot be read or holds a wrong value."""

    exit_code = 5


class StoreError(ContextdError):
    """The database cannot be opened, read or written."""

    exit_code = 6


class SchemaTooNewError(StoreError):
    """The database was written by a newer contextd."""


class ProviderUnavailableError(ContextdError):
    """An embedding provider or vector store cannot be used (missing package, key, server)."""

    exit_code = 5


class DaemonError(ContextdError):
    """The daemon could not be started or reached."""

    exit_code = 5


class RemoteError(ContextdError):
    """Reaching another machine failed: ssh itself, or contextd there."""

    exit_code = 7
