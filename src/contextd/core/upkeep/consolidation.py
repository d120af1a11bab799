"""Duplicates that got in anyway (forced, imported, synced) and clusters of similar records.

A duplicate is a record of the same project, kind and status as an older one, with the same
text, or a vector at or above `refresh.duplicate_threshold` and words that say the same thing
(see contextd.core.writing.sameness: at least `refresh.merge_text_similarity` alike, with the
same negations, qualifiers, numbers and named things): a close vector alone is not enough, as
a reversed rule sits closer than most rewordings. Merging keeps the older id, takes
the union of tags, hints and links (and the higher priority, the more trusted origin, the
later verification), points every link to the newer one at the kept one, and deletes the
newer one with a tombstone, so the deletion travels to other machines.

Similar records (at or above `refresh.similar_threshold`, and not duplicates) are only
reported, in clusters, for a person to judge.
"""

import re
from collections import defaultdict

from msgspec import Struct
from msgspec.structs import replace

from contextd.clock import now
from contextd.config import RefreshSettings
from contextd.core.writing.sameness import record_words, restatement
from contextd.core.writing.validation import MAX_HINTS, MAX_TAGS
from contextd.errors import ConflictError
from contextd.models import Origin, Project, Record, Status
from contextd.retrieval.neighbours import close_pairs
from contextd.storage import records as rows
from contextd.storage import vectors as vector_rows
from contextd.storage.filters import RecordFilter
from contextd.storage.store import Database

__all__ = ["Cluster", "Consolidation", "Merge", "Survey", "Twin"]

_TRUST = {Origin.USER: 2, Origin.AGENT: 1, Origin.IMPORT: 0}
_SPACE = re.compile(r"\s+")


class Twin(Struct, frozen=True):
    record: Record
    similarity: float | None  # the vectors' cosine; None: the very same text
    text_similarity: float = 1.0  # the words' (see contextd.core.writing.sameness)


class Merge(Struct, frozen=True):
    """An older record and the newer duplicates that merge into it."""

    kept: Record
    twins: list[Twin]


class Cluster(Struct, frozen=True):
    """Active records alike enough for a person to look at together."""

    records: list[Record]
    similarity: float  # the closest pair's


class Survey(Struct, frozen=True):
    merges: list[Merge]
    clusters: list[Cluster]
    compared: int  # records looked at
    without_vector: int  # of those, records with no current vector (text compared only)


class Consolidation:
    def __init__(
        self,
        db: Database,
        provider: tuple[str, int] | None,  # (id, dimensions) of the vectors in use
        settings: RefreshSettings,
    ) -> None:
        self._db = db
        self._provider = provider
        self._settings = settings

    def survey(self, project: Project | None = None) -> Survey:
        """Duplicates to merge and clusters of similar records: in `project` (and the global
        records), or in the whole store."""
        scope = (
            RecordFilter(project.id, statuses=())
            if project is not None
            else RecordFilter(None, statuses=(), every_project=True)
        )
        conn = self._db.connection()
        records = {r.id: r for r in rows.list_records(conn, scope, oldest_first=True)}
        close, with_vectors = self._close_pairs(records)
        without = len(records) - with_vectors
        merges, merged = self._merges(records, close)
        clusters = self._clusters(records, close, merged)
        return Survey(merges, clusters, len(records), without)

    def merge(self, merge: Merge) -> Record:
        """Fold the twins into the kept record, in one transaction."""
        twins = [t.record for t in merge.twins]
        with self._db.transaction() as conn:
            for twin in twins:
                rows.forward_links(conn, twin.id, merge.kept.id)
            kept = rows.get_record(conn, merge.kept.id)
            if kept is None:
                raise ConflictError(f"{merge.kept.id} was deleted meanwhile; nothing merged.")
            united = _united(kept, twins)
            for twin in twins:
                rows.delete_record(conn, twin, now())
            rows.replace_record(conn, united)
            if (united.tags, united.retrieval_hints) != (kept.tags, kept.retrieval_hints):
                vector_rows.delete_embedding(conn, united.id)  # its text changed: re-embedded
        return united

    def _close_pairs(self, records: dict[str, Record]) -> tuple[dict[tuple[str, str], float], int]:
        """Same-project pairs by cosine (at least the similar threshold), and pairs of the
        same text at 1.0, keyed (older, newer); and how many records had a vector."""
        order = {rid: at for at, rid in enumerate(records)}
        pairs: dict[tuple[str, str], float] = {}
        by_text: dict[tuple[object, ...], list[str]] = defaultdict(list)
        for record in records.values():
            by_text[(record.project_id, record.kind, _text_key(record))].append(record.id)
        for same in by_text.values():
            for newer in same[1:]:
                pairs[(same[0], newer)] = 1.0
        if self._provider is None:
            return pairs, 0
        provider, dimensions = self._provider
        block = vector_rows.load_block(self._db.connection(), provider, dimensions)
        group = {rid: (r.project_id or "") for rid, r in records.items()}
        with_vectors = sum(1 for rid in block.record_ids if rid in group)
        for a, b, cosine in close_pairs(block, dimensions, group, self._settings.similar_threshold):
            key = (a, b) if order[a] < order[b] else (b, a)
            pairs[key] = max(pairs.get(key, 0.0), cosine)
        return pairs, with_vectors

    def _merges(
        self, records: dict[str, Record], close: dict[tuple[str, str], float]
    ) -> tuple[list[Merge], set[str]]:
        """Oldest first, each record takes its not yet merged duplicates of the same kind and
        status."""
        twins_of: dict[str, list[Twin]] = defaultdict(list)
        for (older, newer), similarity in close.items():
            a, b = records[older], records[newer]
            if (a.kind, a.status, a.project_id) != (b.kind, b.status, b.project_id):
                continue
            twin = self._twin(a, b, similarity)
            if twin is not None:
                twins_of[older].append(twin)
        merges: list[Merge] = []
        merged: set[str] = set()
        for rid in records:  # oldest first
            if rid in merged or rid not in twins_of:
                continue
            twins = [t for t in twins_of[rid] if t.record.id not in merged]
            if twins:
                merges.append(Merge(records[rid], twins))
                merged.update(t.record.id for t in twins)
        return merges, merged

    def _twin(self, older: Record, newer: Record, similarity: float) -> Twin | None:
        """`newer` as a duplicate of `older`, or None when it is not one."""
        if _text_key(older) == _text_key(newer):
            return Twin(newer, None)
        if similarity < self._settings.duplicate_threshold:
            return None
        match = restatement(older, newer, self._settings.merge_text_similarity)
        if match is None:
            return None
        return Twin(newer, round(similarity, 3), match.ratio)

    def _clusters(
        self, records: dict[str, Record], close: dict[tuple[str, str], float], merged: set[str]
    ) -> list[Cluster]:
        """Active records alike but not duplicates, gathered around the oldest of them: each
        cluster is a record and the later ones similar to it (so every member is close to the
        first, and a chain of loosely alike records does not grow into one big cluster)."""
        alike: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for (older, newer), similarity in close.items():
            if older in merged or newer in merged:
                continue
            if Status.ACTIVE == records[older].status == records[newer].status:
                alike[older].append((newer, similarity))
        clusters: list[Cluster] = []
        taken: set[str] = set()
        for rid in records:  # oldest first
            if rid in taken or rid not in alike:
                continue
            members = [(other, sim) for other, sim in alike[rid] if other not in taken]
            if not members:
                continue
            taken.add(rid)
            taken.update(other for other, _ in members)
            group = [records[rid], *sorted((records[o] for o, _ in members), key=_age)]
            clusters.append(Cluster(group, round(max(sim for _, sim in members), 3)))
        return sorted(clusters, key=lambda c: (-len(c.records), -c.similarity))


def _age(record: Record) -> tuple[str, str]:
    return record.created_at, record.id


def _text_key(record: Record) -> str:
    return _SPACE.sub(" ", record_words(record)).strip().casefold()


def _united(kept: Record, twins: list[Record]) -> Record:
    everyone = [kept, *twins]
    gone = {t.id for t in twins} | {kept.id}
    tags = tuple(dict.fromkeys(t for r in everyone for t in r.tags))[:MAX_TAGS]
    hints = tuple(dict.fromkeys(h for r in everyone for h in r.retrieval_hints))[:MAX_HINTS]
    related = tuple(dict.fromkeys(rid for r in everyone for rid in r.related_to if rid not in gone))
    return replace(
        kept,
        tags=tags,
        retrieval_hints=hints,
        related_to=related,
        priority=max(r.priority for r in everyone),
        origin=max((r.origin for r in everyone), key=lambda o: _TRUST[o]),
        verified_at=max(r.verified_at for r in everyone),
        updated_at=now(),
    )
