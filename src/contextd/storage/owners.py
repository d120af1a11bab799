"""Whose a record is. On a team server a personal record belongs to the developer who wrote
it and no one else sees it: one written with --private, every checkpoint (where *their* work
stopped), and a global record of a personal category (their preferences, what they are like
to work with). Every other record is the team's. In a home's store the personal records its
owner writes belong to HOME_OWNER: the owner sees everything, as ever, and a token of another
developer that `contextd serve` admits sees the team's records and its own, not the owner's.

Reads apply this through `Dialect.visible`; writes through `owner_of`."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contextd.storage.dialect import Dialect

__all__ = ["HOME_OWNER", "PERSONAL_CATEGORIES", "owner_of", "personal"]

PERSONAL_CATEGORIES = frozenset({"preference", "user"})
HOME_OWNER = "~"  # the owner of a home's personal records (no developer's name can be "~")


def personal(kind: object, project_id: object, category: object, private: bool) -> bool:
    """Whether a record with these fields is its writer's own, not the team's."""
    if private or str(kind) == "checkpoint":
        return True
    return project_id is None and category in PERSONAL_CATEGORIES


def owner_of(
    dialect: "Dialect", kind: object, project_id: object, category: object, private: bool
) -> str:
    """The owner a new row gets on a connection of `dialect`: '' (the team's) unless the
    record is personal, then its developer's (in a home's store, unless a request acts for
    a developer, the home's owner's)."""
    if not personal(kind, project_id, category, private):
        return ""
    return dialect.developer or HOME_OWNER
