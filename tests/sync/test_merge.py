"""The merge rules as pure decisions over versions (updated_at stamps) and histories."""

from contextd.sync.merge import Outcome, decide_record, decide_tombstone

V1, V2, V3, V4 = (
    "2026-01-01T00:00:00.000Z",
    "2026-02-01T00:00:00.000Z",
    "2026-03-01T00:00:00.000Z",
    "2026-04-01T00:00:00.000Z",
)


def test_new_equal_and_fast_forward_versions() -> None:
    assert decide_record(V1, {V1}, None, set(), None) is Outcome.ADD
    assert decide_record(V1, {V1}, V1, {V1}, None) is Outcome.UNCHANGED
    assert decide_record(V2, {V1, V2}, V1, {V1}, None) is Outcome.UPDATE
    assert decide_record(V1, {V1}, V2, {V1, V2}, None) is Outcome.KEEP_LOCAL


def test_siblings_of_a_shared_version_are_a_conflict_whatever_their_dates() -> None:
    assert decide_record(V3, {V1, V3}, V2, {V1}, None) is Outcome.CONFLICT
    assert decide_record(V2, {V1}, V3, {V1, V3}, None) is Outcome.CONFLICT


def test_a_change_relayed_by_a_third_store_is_still_seen_as_a_sibling() -> None:
    # laptop edited V1 -> V2 and pushed it to lab; desk edited V1 -> V3 and pulls from lab.
    assert decide_record(V2, {V1, V2}, V3, {V1}, None) is Outcome.CONFLICT


def test_without_shared_history_the_newer_version_wins() -> None:
    assert decide_record(V2, set(), V1, set(), None) is Outcome.UPDATE
    assert decide_record(V1, set(), V2, set(), None) is Outcome.KEEP_LOCAL


def test_a_deletion_beats_older_versions_and_loses_to_newer_ones() -> None:
    assert decide_record(V1, {V1}, None, set(), V2) is Outcome.STAYS_DELETED
    assert decide_record(V3, {V1, V3}, None, set(), V2) is Outcome.ADD
    assert decide_tombstone(V2, V1, None) is Outcome.DELETE
    assert decide_tombstone(V2, V3, None) is Outcome.KEEP_LOCAL
    assert decide_tombstone(V2, None, None) is Outcome.NEW_TOMBSTONE
    assert decide_tombstone(V2, None, V4) is Outcome.UNCHANGED
    assert decide_tombstone(V4, None, V2) is Outcome.NEW_TOMBSTONE
