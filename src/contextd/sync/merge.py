"""The merge rules, as pure decisions: what happens to one incoming record or tombstone.

A record's version is its `updated_at`. Each store remembers the versions it exchanged with
other stores (its history); a version descends from every version in its history. So:

* equal versions: nothing to do;
* the incoming version descends from the local one: take it (only the other side changed);
* the local version descends from the incoming one: keep it (only this side changed);
* both descend from a shared older version but not from each other: both sides changed since
  they last exchanged — keep the local copy and list the divergence;
* no shared history at all: the newer `updated_at` wins.

A tombstone is a deletion with a date: it removes a local record not updated after it, and
a record updated after a deletion brings the record back.
"""

from collections.abc import Set
from enum import StrEnum

__all__ = ["Outcome", "decide_record", "decide_tombstone"]


class Outcome(StrEnum):
    ADD = "added"
    UPDATE = "updated"
    UNCHANGED = "unchanged"
    KEEP_LOCAL = "kept_local"  # this side's version is newer or descends from theirs
    CONFLICT = "conflict"
    DELETE = "deleted"
    STAYS_DELETED = "stays_deleted"  # deleted here after the incoming version was written
    NEW_TOMBSTONE = "tombstone"  # a deletion of a record this store never held, kept to pass on


def decide_record(
    incoming: str,
    incoming_history: Set[str],
    local: str | None,
    local_history: Set[str],
    deleted_at: str | None,
) -> Outcome:
    """What to do with an incoming version of a record (versions are updated_at stamps)."""
    if local is None:
        if deleted_at is not None and deleted_at >= incoming:
            return Outcome.STAYS_DELETED
        return Outcome.ADD
    if incoming == local:
        return Outcome.UNCHANGED
    if local in incoming_history:
        return Outcome.UPDATE
    if incoming in local_history:
        return Outcome.KEEP_LOCAL
    if incoming_history & local_history:
        return Outcome.CONFLICT
    return Outcome.UPDATE if incoming > local else Outcome.KEEP_LOCAL


def decide_tombstone(deleted_at: str, local: str | None, local_deleted_at: str | None) -> Outcome:
    """What to do with an incoming deletion of a record whose local version is `local`."""
    if local is None:
        if local_deleted_at is not None and local_deleted_at >= deleted_at:
            return Outcome.UNCHANGED
        return Outcome.NEW_TOMBSTONE
    if local > deleted_at:
        return Outcome.KEEP_LOCAL
    return Outcome.DELETE
