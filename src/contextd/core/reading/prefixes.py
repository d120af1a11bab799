"""Ids given as a unique prefix (records and sessions alike)."""

from collections.abc import Callable

from contextd.errors import AmbiguousIdError, InvalidInputError
from contextd.ids import MIN_PREFIX

__all__ = ["match_prefix"]


def match_prefix(
    reference: str,
    ids_starting_with: Callable[[str], list[str]],
    label: str,
    noun: str,
    printed_for: Callable[[str], str | None] | None = None,
) -> str | None:
    """The one id `reference` names (the id itself, the only one it begins, or the one it is
    the short id of: `printed_for`), or None.

    Raises:
        InvalidInputError: shorter than MIN_PREFIX characters.
        AmbiguousIdError: it begins several ids and is none of them nor any one's short id.
    """
    prefix = reference.strip().lower()
    if len(prefix) < MIN_PREFIX:
        raise InvalidInputError(
            f"{label} {reference!r} is too short; give at least {MIN_PREFIX} characters of it."
        )
    matches = ids_starting_with(prefix)
    if len(matches) > 1 and prefix not in matches:
        owner = printed_for(prefix) if printed_for is not None else None
        if owner is not None:
            return owner
        raise AmbiguousIdError(reference, matches, noun)
    if not matches:
        return None
    return prefix if prefix in matches else matches[0]
