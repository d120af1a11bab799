"""Whose a record is. On a team server a personal record belongs to the developer who wrote
it and no one else sees it: one written with --private, every checkpoint (where *their* work
stopped), and a global record of a personal category (their preferences, what they are like
to work with). Every other record is the team's. A home's store has one developer: every row
is the team's, and nothing is kept apart.

Reads apply this through `Dialect.visible`; writes through `owner_of`."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contextd.storage.dialect import Dialect

__all__ = ["PERSONAL_CATEGORIES", "owner_of", "personal"]

PERSONAL_CATEGORIES = frozenset({"preference", "user"})


def personal(kind: object, project_id: object, category: object, private: bool) -> bool:
    """Whether a record with these fields is its writer's own, not the team's."""
    if private or str(kind) == "checkpoint":
        return True
    return project_id is None and category in PERSONAL_CATEGORIES


def owner_of(
    dialect: "Dialect", kind: object, project_id: object, category: object, private: bool
) -> str:
    """The owner a new row gets on a connection of `dialect`: its developer for a personal
    record, '' (the team's) otherwise, and always '' in a home's store."""
    if not dialect.developer:
        return ""
    return dialect.developer if personal(kind, project_id, category, private) else ""
