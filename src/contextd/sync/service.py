"""Bundles in and out of this store, the divergences found, and forgetting old tombstones."""

import json
import logging
import socket
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from contextd.clock import now, to_iso
from contextd.core.writing.duplicates import DuplicateGuard
from contextd.errors import (
    DuplicateError,
    InvalidInputError,
    NotFoundError,
    ProviderUnavailableError,
)
from contextd.models import Project, Record, Status
from contextd.retrieval.indexer import Indexer
from contextd.storage import groups as group_rows
from contextd.storage import projects as project_rows
from contextd.storage import records as record_rows
from contextd.storage import sync_state as sync_rows
from contextd.storage import vectors as vector_rows
from contextd.storage.connection import Connection
from contextd.storage.filters import RecordFilter
from contextd.storage.store import Database
from contextd.sync.admission import Refusals, admit_bundle
from contextd.sync.bundle import (
    Bundle,
    BundleGroup,
    BundleRecord,
    BundleTombstone,
    group_entry,
    parse_bundle,
    parse_bundle_record,
    project_entry,
    record_to_json,
)
from contextd.sync.importer import ImportReport, Restates, apply_bundle

Progress = Callable[[int, int], None]  # (done, total)

__all__ = ["Conflict", "SyncService"]

log = logging.getLogger(__name__)


class _DryRun(Exception):
    """Raised inside the merge transaction to roll a dry run back."""


class Conflict(Struct, frozen=True):
    """A record both sides changed since they last exchanged; the local copy was kept."""

    local: Record
    peer: str
    remote: dict[str, Any]  # the other side's version, as bundle JSON
    detected_at: str

    @property
    def differing(self) -> list[str]:
        """Names of the fields whose values differ between the two versions."""
        mine = record_to_json(self.local)
        ignored = {"history", "project_id", "updated_at", "origin"}
        return sorted(k for k in mine if k not in ignored and mine[k] != self.remote.get(k))


class SyncService:
    """Export and import bundles; list divergences; expire tombstones."""

    def __init__(
        self, db: Database, indexer: Indexer | None, guard: DuplicateGuard | None = None
    ) -> None:
        self._db = db
        self._indexer = indexer
        self._guard = guard

    def store_id(self) -> str:
        return sync_rows.store_id(self._db.connection())

    def export(
        self, project: Project | None = None, since: str | None = None, *, remember: bool = True
    ) -> Bundle:
        """Every record and tombstone (of `project`, changed since `since`). The versions sent
        are remembered (unless not `remember`), so later local edits are known to descend
        from them; without remembering, nothing is written (a read-only store can export)."""
        reading = self._db.transaction() if remember else self._db.snapshot()
        with reading as conn:
            scope = project.id if project else None
            records = sync_rows.export_records(conn, scope, since)
            if remember:
                sync_rows.add_versions(conn, ((r.id, r.updated_at) for r in records))
            histories = sync_rows.versions_of(conn, [r.id for r in records])
            tombstones = sync_rows.export_tombstones(conn, scope, since)
            projects = [project] if project else project_rows.list_projects(conn)
            groups = _groups_of(conn, projects, every=project is None)
            store = sync_rows.store_id(conn)
        return Bundle(
            store_id=store,
            exported_at=now(),
            projects=tuple(project_entry(p) for p in projects),
            records=tuple(
                BundleRecord(r, tuple(sorted(histories.get(r.id, set()) | {r.updated_at})))
                for r in records
            ),
            tombstones=tuple(BundleTombstone(t.id, t.project_id, t.deleted_at) for t in tombstones),
            host=socket.gethostname() or None,
            groups=groups,
        )

    def import_text(
        self,
        text: str,
        source: str,
        *,
        dry_run: bool = False,
        peer: str | None = None,
        progress: Progress | None = None,
    ) -> ImportReport:
        """Check and merge a bundle's JSON; nothing is written on a dry run. `progress(done,
        total)` follows the embedding of the records new here, the slow part.

        Raises:
            InvalidInputError: the text is not a bundle this contextd can read, or it came
                from this very store.
        """
        bundle = parse_bundle(text, source)
        if bundle.store_id == self.store_id():
            raise InvalidInputError(
                f"{source} was exported from this very store; import it on another machine."
            )
        peer = peer or bundle.host or source
        return self.merge(bundle, peer, source, dry_run=dry_run, progress=progress)

    def merge(
        self,
        bundle: Bundle,
        peer: str,
        source: str,
        *,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> ImportReport:
        """Hold `bundle` to the write rules, then merge it in one transaction: all of it, or
        (on any refusal) none of it.

        Raises:
            InvalidInputError: an entry breaks a rule; names the first and counts the others.
        """
        bundle = admit_bundle(bundle, source)
        vectors = self._vectors_of_new(bundle, progress)
        report: ImportReport | None = None
        try:
            with self._db.transaction() as conn:
                refusals = Refusals(source)
                report = apply_bundle(
                    conn, bundle, peer, dry_run, refusals, self._restates(vectors)
                )
                if dry_run:
                    raise _DryRun
                computed = [vectors[r.id] for r in report.written if r.id in vectors]
                vector_rows.upsert_embeddings(conn, computed, now())
        except _DryRun:
            pass
        assert report is not None
        if not dry_run:
            self._embed(report.written)
        return report

    def _vectors_of_new(
        self, bundle: Bundle, progress: Progress | None = None
    ) -> dict[str, vector_rows.EmbeddingRow]:
        """Vectors of the active records this store does not hold yet: the duplicate rule
        needs them, and they are stored with the records."""
        if self._indexer is None:
            return {}
        everything = RecordFilter(None, statuses=(), every_project=True)
        ids = [e.record.id for e in bundle.records]
        held = record_rows.records_in_scope(self._db.connection(), ids, everything)
        new = [
            e.record
            for e in bundle.records
            if e.record.id not in held and e.record.status is Status.ACTIVE
        ]
        done = 0

        def tick(batch: int) -> None:
            nonlocal done
            done += batch
            if progress is not None:
                progress(done, len(new))

        try:
            return {row.record_id: row for row in self._indexer.vectors_for(new, tick)}
        except ProviderUnavailableError as exc:
            log.warning("checking %d records for duplicates by title only (%s)", len(new), exc)
            return {}

    def _restates(self, vectors: dict[str, vector_rows.EmbeddingRow]) -> Restates | None:
        guard = self._guard
        if guard is None:
            return None

        def restates(record: Record, exempt: frozenset[str]) -> str | None:
            row = vectors.get(record.id)
            try:
                guard.check(record, row.vector if row else None, exempt=exempt)
            except DuplicateError as exc:
                return (
                    f"repeats {exc.existing_id}, which this store holds already (as "
                    "`contextd add` would refuse it); drop one of the two copies"
                )
            return None

        return restates

    def conflicts(self) -> list[Conflict]:
        conn = self._db.connection()
        found: list[Conflict] = []
        for row in sync_rows.list_conflicts(conn):
            local = record_rows.get_record(conn, row.record_id)
            if local is not None:
                remote = json.loads(row.remote_record)
                found.append(Conflict(local, row.peer, remote, row.detected_at))
        return found

    def resolve(self, record_id: str, *, keep_local: bool) -> Record:
        """Settle a divergence: keep this copy (it then supersedes theirs on the next
        exchange) or take theirs; either way the result descends from both versions.

        Raises:
            NotFoundError: no divergence is listed for the record.
        """
        with self._db.transaction() as conn:
            row = next(
                (c for c in sync_rows.list_conflicts(conn) if c.record_id == record_id), None
            )
            local = record_rows.get_record(conn, record_id)
            if row is None or local is None:
                raise NotFoundError(
                    f"No divergence is listed for {record_id}; `contextd sync conflicts` "
                    "lists them."
                )
            theirs = parse_bundle_record(row.remote_record, "the stored divergence")
            kept = local
            if not keep_local:
                kept = replace(
                    theirs.record, project_id=local.project_id, session_id=local.session_id
                )
                record_rows.replace_record(conn, kept)
            versions = {*theirs.history, theirs.record.updated_at, local.updated_at}
            sync_rows.add_versions(conn, ((record_id, v) for v in versions))
            sync_rows.delete_conflict(conn, record_id)
        if not keep_local:
            self._embed([kept])
        return kept

    def forget_tombstones(self, retention_days: int) -> int:
        """Drop deletions older than the retention; returns how many were forgotten."""
        cutoff = to_iso(datetime.now(UTC) - timedelta(days=retention_days))
        with self._db.transaction() as conn:
            return sync_rows.forget_tombstones(conn, cutoff)

    def _embed(self, records: list[Record]) -> None:
        """Vectors for merged records, derived here; skipped (caught up later) when the
        provider is unavailable."""
        if self._indexer is None or not records:
            return
        try:
            self._indexer.embed(self._indexer.stale(records))
        except ProviderUnavailableError as exc:
            log.warning("merged %d records without vectors (%s)", len(records), exc)


def _groups_of(
    conn: Connection, projects: list[Project], *, every: bool
) -> tuple[BundleGroup, ...]:
    """Every group (`every`), or those the exported projects belong to; each with those of
    the exported projects that are its members."""
    exported = {p.id for p in projects}
    return tuple(
        group_entry(group, tuple(m for m in group.members if m in exported))
        for group in group_rows.list_groups(conn)
        if every or any(m in exported for m in group.members)
    )
