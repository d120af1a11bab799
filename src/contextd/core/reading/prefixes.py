"""What a person typed to name a record or a session: a record's handle (D12), the whole id,
or a prefix of it. Every match is returned, so a caller refuses a name that fits two."""

from collections.abc import Callable, Sequence

from contextd.errors import AmbiguousIdError, InvalidInputError
from contextd.ids import MIN_PREFIX, is_handle

__all__ = ["matching_ids", "refuse_ambiguous"]


def matching_ids(
    reference: str,
    ids_starting_with: Callable[[str], list[str]],
    label: str,
    with_handle: Callable[[str], str | None] | None = None,
) -> list[str]:
    """The ids `reference` names: the one whose handle it is (when `with_handle` looks handles
    up) and those it begins, as a prefix of MIN_PREFIX characters or more.

    Raises:
        InvalidInputError: neither a handle nor long enough to be a prefix.
    """
    text = reference.strip()
    handle = with_handle is not None and is_handle(text)
    found: list[str] = []
    if handle and with_handle is not None:
        owner = with_handle(text)
        found += [owner] if owner else []
    prefix = text.lower()
    if len(prefix) >= MIN_PREFIX:
        found += [i for i in ids_starting_with(prefix) if i not in found]
    elif not handle:
        also = " or its handle (such as D12)" if with_handle is not None else ""
        raise InvalidInputError(
            f"{label} {reference!r} is too short; give at least {MIN_PREFIX} characters of it"
            f"{also}."
        )
    return found


def refuse_ambiguous(
    reference: str, found: Sequence[str], total: int, describe: Callable[[str], str], noun: str
) -> None:
    """Raise AmbiguousIdError, listing each candidate, when `reference` names more than one.

    Raises:
        AmbiguousIdError: `found` holds several ids.
    """
    if len(found) > 1:
        raise AmbiguousIdError(
            reference, [describe(i) for i in found], max(total, len(found)), noun
        )
