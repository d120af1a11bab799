"""`refresh`: keep the store true, step by step, each step saying what it did with counts.

1. words: index again the text of records an older contextd indexed (storage.records
   .outdated_text);
2. embeddings: embed records whose vector is missing, of older text, or of another model
   (the provider or model changed);
3. duplicates: list exact and near duplicates (see consolidation) and, only when `confirm`
   says yes to that list, merge each into its older record;
4. similar: report clusters of similar records for a person to judge;
5. index: rebuild the vector index from SQLite;
6. tombstones: forget deletions older than `sync.tombstone_retention_days`.

Nothing but a confirmed list is ever merged: a refresh run to bring the index up to date
leaves every record as it is. With `dry_run` nothing is written: each step says what it
would do.
"""

from collections.abc import Callable
from contextlib import suppress
from datetime import UTC, datetime, timedelta

from msgspec import Struct

from contextd.clock import to_iso
from contextd.core.upkeep.consolidation import Cluster, Consolidation, Merge
from contextd.core.upkeep.semantic_index import IndexService
from contextd.errors import ProviderUnavailableError
from contextd.storage import record_log
from contextd.storage import records as record_rows
from contextd.storage import sync_state as sync_rows
from contextd.storage.store import Database
from contextd.text.grammar import counted

__all__ = ["RefreshReport", "Refresher", "Step"]


class Step(Struct, frozen=True):
    name: str
    summary: str  # what was done (or would be), in a sentence
    counts: dict[str, int]


class RefreshReport(Struct, frozen=True):
    dry_run: bool
    steps: list[Step]
    merges: list[Merge]  # the duplicates found, each kept record with its twins
    merged: bool  # whether `merges` were merged (confirmed), or only listed
    clusters: list[Cluster]
    embedded: int


class Refresher:
    def __init__(
        self,
        db: Database,
        index: IndexService,
        consolidation: Consolidation,
        retention_days: int,
    ) -> None:
        self._db = db
        self._index = index
        self._consolidation = consolidation
        self._retention_days = retention_days

    def run(
        self,
        *,
        dry_run: bool = False,
        force_embeddings: bool = False,
        progress: Callable[[int, int], None] | None = None,
        confirm: Callable[[list[Merge]], bool] | None = None,
    ) -> RefreshReport:
        """Run every step; the duplicates found are merged only if `confirm` (shown them
        before anything is merged) returns True."""
        words = self._words(dry_run)
        embeddings, embedded = self._embeddings(dry_run, force_embeddings, progress)
        survey = self._consolidation.survey()
        merging = bool(
            survey.merges and not dry_run and confirm is not None and confirm(survey.merges)
        )
        duplicates = self._duplicates(survey.merges, merging, dry_run, survey.without_vector)
        similar = Step(
            "similar",
            f"{counted(len(survey.clusters), 'cluster')} of similar records "
            f"({counted(sum(len(c.records) for c in survey.clusters), 'record')}) for you to judge",
            {"clusters": len(survey.clusters)},
        )
        steps = [
            words,
            embeddings,
            duplicates,
            similar,
            self._rebuild(dry_run),
            self._expire(dry_run),
        ]
        return RefreshReport(dry_run, steps, survey.merges, merging, survey.clusters, embedded)

    def _words(self, dry_run: bool) -> Step:
        if dry_run:
            count = len(record_rows.outdated_text(self._db.connection()))
            return Step(
                "words", f"would index {counted(count, 'record')} again", {"to_index": count}
            )
        with self._db.transaction() as conn:
            outdated = record_rows.outdated_text(conn)
            for record in outdated:
                record_rows.replace_record(conn, record)
        summary = (
            f"indexed {counted(len(outdated), 'record')} again, as this version reads words"
            if outdated
            else "every record's words are indexed as this version reads them"
        )
        return Step("words", summary, {"indexed": len(outdated)})

    def _embeddings(
        self, dry_run: bool, force: bool, progress: Callable[[int, int], None] | None
    ) -> tuple[Step, int]:
        state = self._index.state()
        if state.provider == "none":
            return Step("embeddings", "vectors are off: nothing to embed", {"embedded": 0}), 0
        other = sum(state.other_models.values())
        if dry_run:
            pending = self._index.pending(force=force)
            counts = {"to_embed": pending, "other_model_vectors": other}
            return Step(
                "embeddings", f"would embed {counted(pending, 'record')}{_other(other)}", counts
            ), 0
        try:
            done = self._index.refresh(force=force, progress=progress)
        except ProviderUnavailableError as exc:
            return Step("embeddings", f"skipped: {exc}", {"embedded": 0}), 0
        counts = {"embedded": done, "other_model_vectors": other}
        return Step(
            "embeddings", f"embedded {counted(done, 'record')}{_other(other)}", counts
        ), done

    def _duplicates(
        self, merges: list[Merge], merging: bool, dry_run: bool, without_vector: int
    ) -> Step:
        twins = sum(len(m.twins) for m in merges)
        counts = {"merged": twins if merging else 0, "into": len(merges)}
        into = counted(len(merges), "record")
        text_only = (
            f"; {counted(without_vector, 'record')} without a current vector "
            f"{'was' if without_vector == 1 else 'were'} compared by text only"
            if without_vector
            else ""
        )
        if dry_run:
            counts["to_merge"] = twins
            verb = (
                f"would merge {counted(twins, 'duplicate')} into {counted(len(merges), 'record')}"
            )
            return Step("duplicates", verb + text_only, counts)
        if not merging:
            counts["to_merge"] = twins
            verb = (
                f"found {counted(twins, 'duplicate')} of {into}, not merged (not confirmed)"
                if merges
                else "no duplicates to merge"
            )
            return Step("duplicates", verb + text_only, counts)
        for merge in merges:
            self._consolidation.merge(merge)
        if merges and self._index.state().provider != "none":
            # The kept records whose hints or tags grew get their vector back now; if the
            # provider fails they are found by text until a query or refresh catches up.
            with suppress(ProviderUnavailableError):
                self._index.refresh()
        summary = (
            f"merged {counted(twins, 'duplicate')} into {counted(len(merges), 'older record')}"
        )
        return Step("duplicates", summary + text_only, counts)

    def _rebuild(self, dry_run: bool) -> Step:
        state = self._index.state()
        if state.provider == "none":
            return Step("index", "vectors are off: no index to rebuild", {"vectors": 0})
        if dry_run:
            summary = (
                f"would rebuild the {state.backend} index ({counted(state.embedded, 'vector')})"
            )
            return Step("index", summary, {"vectors": state.embedded})
        held = self._index.rebuild()
        return Step(
            "index",
            f"rebuilt the {state.backend} index: {counted(held, 'vector')}",
            {"vectors": held},
        )

    def _expire(self, dry_run: bool) -> Step:
        days = self._retention_days
        cutoff = to_iso(datetime.now(UTC) - timedelta(days=days))
        if dry_run:
            count = sync_rows.tombstones_before(self._db.connection(), cutoff)
            summary = f"would forget {counted(count, 'deletion')} older than {counted(days, 'day')}"
            return Step("tombstones", summary, {"to_forget": count})
        with self._db.transaction() as conn:
            count = sync_rows.forget_tombstones(conn, cutoff)
            record_log.forget_deleted(conn)  # a deletion forgotten cannot be restored
        return Step(
            "tombstones",
            f"forgot {counted(count, 'deletion')} older than {counted(days, 'day')}",
            {"forgotten": count},
        )


def _other(count: int) -> str:
    return f" (replacing {counted(count, 'vector')} of another model)" if count else ""
