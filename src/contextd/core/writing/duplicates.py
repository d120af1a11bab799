"""Catching restatements at capture: near-identical records are refused, similar ones reported.

Near-identical is a close vector and words that say the same thing (`sameness.restatement`,
what `refresh` requires before it merges): a reversed rule ("Never let import-worker call
metrics-agent" after "Always let ...") or the same rule about other components sits at a
cosine above the duplicate threshold, and is a new fact, not a restatement.

Superseded and archived records count too, so a fact the team moved away from cannot come
back as new, whatever kind it comes back as. Checkpoints are never refused for resembling
earlier checkpoints: a stretch of work leaves a series of them.
"""

import math
from collections.abc import Set as AbstractSet

from contextd.config import RefreshSettings
from contextd.core.writing.replacement import NAMED_FLOOR, likely_replaced
from contextd.core.writing.sameness import restatement
from contextd.errors import DuplicateError
from contextd.models import Kind, Record, Similar, Status
from contextd.retrieval.vector_index import VectorIndex
from contextd.storage import groups as group_rows
from contextd.storage import records as rows
from contextd.storage.filters import RecordFilter
from contextd.storage.store import Database

__all__ = ["DuplicateGuard"]

_NEIGHBOURS = 10


class DuplicateGuard:
    def __init__(self, db: Database, index: VectorIndex | None, settings: RefreshSettings) -> None:
        self._db = db
        self._index = index
        self._duplicate = settings.duplicate_threshold
        self._similar = settings.similar_threshold
        self._replacement = settings.replacement_threshold
        self._same_words = settings.merge_text_similarity

    def check(
        self, record: Record, vector: list[float] | None, exempt: AbstractSet[str] = frozenset()
    ) -> list[Similar]:
        """Refuse `record` when it restates one already stored (any status), except the
        records in `exempt` (those it is about to replace); else the stored records near it,
        for `similar` to judge without searching again.

        Raises:
            DuplicateError: naming the stored record and what to do instead.
        """
        conn = self._db.connection()
        same = rows.same_title(conn, record)
        if same is not None and _guarded(record, same, exempt):
            raise self._refusal(record, same, None)
        near = self.near(record, vector)
        for found in near:
            if self._restates(record, found) and _guarded(record, found.record, exempt):
                raise self._refusal(record, found.record, found.similarity)
        return near

    def restate_each_other(
        self,
        first: Record,
        first_vector: list[float] | None,
        second: Record,
        second_vector: list[float] | None,
    ) -> bool:
        """Whether two records not stored yet, given their vectors, are near-identical (as
        `check` would find one of them against the other once stored)."""
        if not first_vector or not second_vector:
            return False
        dot = sum(a * b for a, b in zip(first_vector, second_vector, strict=True))
        norms = math.sqrt(sum(a * a for a in first_vector) * sum(b * b for b in second_vector))
        return norms > 0 and self._restates(second, Similar(first, dot / norms))

    def _restates(self, record: Record, found: Similar) -> bool:
        """A close vector and the same words: a restatement, not a new fact near it."""
        return (
            found.similarity >= self._duplicate
            and restatement(found.record, record, self._same_words) is not None
        )

    def similar(self, record: Record, near: list[Similar]) -> list[Similar]:
        """Of the stored records `near` it (see `near`), those close to `record`, closest
        first; the one it seems to replace (a looser match plus a cue, see
        replacement.likely_replaced) is marked `replaces`."""
        replaced = likely_replaced(record, near, self._replacement)
        found = [s for s in near if s.similarity >= self._similar]
        if replaced is not None:
            found = [s for s in found if s.record.id != replaced.record.id] + [replaced]
            found.sort(key=lambda s: s.similarity, reverse=True)
        return found

    def near(self, record: Record, vector: list[float] | None) -> list[Similar]:
        """The stored records nearest `record` by its vector (one index search)."""
        if vector is None or self._index is None:
            return []
        reach = group_rows.reach(self._db.connection(), record.project_id)
        nearest = [
            (rid, cos)
            # Whole records are compared: a note alike one passage of a long record is no twin.
            for rid, cos in self._index.search(vector, reach, _NEIGHBOURS, starts_only=True)
            if rid != record.id and cos >= min(self._similar, self._replacement, NAMED_FLOOR)
        ]
        found = rows.records_in_scope(
            self._db.connection(),
            [rid for rid, _ in nearest],
            RecordFilter(record.project_id, statuses=()),
        )
        return [Similar(found[rid], cos) for rid, cos in nearest if rid in found]

    def _refusal(
        self, record: Record, existing: Record, similarity: float | None
    ) -> DuplicateError:
        how = "repeats" if similarity is None else f"is {similarity:.0%} the same as"
        other = "" if existing.kind is record.kind else f"{existing.kind} "
        head = f"This {record.kind} {how} {other}{existing.id} ({_clip(existing.title)})"
        if existing.status is Status.SUPERSEDED:
            return DuplicateError(
                existing.id,
                f"{head}, which was superseded on {existing.updated_at[:10]} by "
                f"{self._successor(existing)}: the team moved away from it.",
                ("show", "record_why", "force"),
            )
        if existing.status is Status.ARCHIVED:
            return DuplicateError(
                existing.id, f"{head}, which is archived.", ("unarchive", "force")
            )
        return DuplicateError(existing.id, f"{head}.", ("update", "verify", "supersede", "force"))

    def _successor(self, superseded: Record) -> str:
        """The current record that replaced `superseded` (the end of its chain), as
        `id (title)`; the record named in its link when the chain leads nowhere current."""
        end = rows.chain_end(self._db.connection(), superseded.superseded_by)
        if end is None or end.status is not Status.ACTIVE:
            return superseded.superseded_by or "a newer record"
        current = rows.get_record(self._db.connection(), end.id)
        return f"{end.id} ({_clip(current.title)})" if current else end.id


def _guarded(record: Record, stored: Record, exempt: AbstractSet[str]) -> bool:
    """Whether `record` may be refused for restating `stored`: not one it replaces, and not
    one checkpoint after another (each says where work stood at its time, and the next one
    of a stretch of work reads much like the last)."""
    if stored.id in exempt:
        return False
    return not (record.kind is Kind.CHECKPOINT and stored.kind is Kind.CHECKPOINT)


def _clip(text: str, width: int = 60) -> str:
    """One line, at most `width` characters: quoted titles must not break an error line."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
