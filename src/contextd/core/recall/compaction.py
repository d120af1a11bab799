"""What the hooks put in front of an agent session, and what a compaction made it forget.

An agent's context compaction silently drops what it had been told. Before one (PreCompact)
the records the session had been given are snapshotted; after it, the records not given again
since are the report: what the agent should re-read.
"""

from datetime import UTC, datetime, timedelta
from typing import Any

from msgspec import Struct

from contextd.clock import now, to_iso
from contextd.core.recall.presentation import fence, one_line
from contextd.ids import new_id
from contextd.models import Project, Record, Status
from contextd.storage import hook_state as rows
from contextd.storage import records as record_rows
from contextd.storage.filters import RecordFilter
from contextd.storage.store import Database
from contextd.text.grammar import counted

__all__ = ["CompactionReport", "HookState", "report_text"]

SHOWN_RETENTION_DAYS = 30


class CompactionReport(Struct, frozen=True):
    """What a compaction made the session forget, and what it had written before it."""

    taken_at: str
    trigger: str
    given: int  # records the session had been given before the compaction
    lost: tuple[Record, ...]  # of those, still current and not given again since
    written: tuple[Record, ...]  # recorded in the session before the compaction
    quality_issues: int

    def as_dict(self) -> dict[str, Any]:
        def brief(record: Record) -> dict[str, str]:
            return {"id": record.id, "kind": str(record.kind), "title": record.title}

        return {
            "taken_at": self.taken_at,
            "trigger": self.trigger,
            "given": self.given,
            "lost": [brief(r) for r in self.lost],
            "written": [brief(r) for r in self.written],
            "quality_issues": self.quality_issues,
        }


class HookState:
    """What the hooks showed each session, and compaction snapshots. On a store that cannot
    be written nothing is remembered: the hooks still answer (without the memory of what they
    showed before)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def note_shown(self, session_key: str, records: list[Record], via: str) -> None:
        """Remember that these records were put in front of the agent session."""
        if not records or self._db.read_only:
            return
        with self._db.transaction() as conn:
            rows.add_shown(conn, session_key, [r.id for r in records], via, now())

    def shown(self, session_key: str, via: str) -> set[str]:
        return set(rows.shown_ids(self._db.connection(), session_key, via=via))

    def forget_old(self) -> None:
        if self._db.read_only:
            return
        cutoff = to_iso(datetime.now(UTC) - timedelta(days=SHOWN_RETENTION_DAYS))
        with self._db.transaction() as conn:
            rows.forget_shown_before(conn, cutoff)

    def snapshot(self, session_key: str, project: Project, trigger: str, quality: int) -> int:
        """Before a compaction: keep what the session has been given; returns how many."""
        conn = self._db.connection()
        given = rows.shown_ids(conn, session_key)
        snapshot = rows.Snapshot(
            new_id(), session_key, project.id, now(), trigger, tuple(given), quality, None, None
        )
        if self._db.read_only:
            return len(given)
        with self._db.transaction() as conn:
            rows.insert_snapshot(conn, snapshot)
        return len(given)

    def report(self, project: Project, session_key: str | None = None) -> CompactionReport | None:
        """The latest compaction's report for the project (or one agent session), compared now
        if it was not yet; None when no compaction was snapshotted."""
        conn = self._db.connection()
        snapshot = rows.latest_snapshot(conn, project.id, session_key)
        if snapshot is None:
            return None
        if snapshot.report is None:
            report = self._compare(snapshot)
            if not self._db.read_only:
                with self._db.transaction() as write:
                    rows.save_report(write, snapshot.id, report.as_dict(), now())
            return report
        return self._from_saved(snapshot, snapshot.report)

    def _compare(self, snapshot: rows.Snapshot) -> CompactionReport:
        conn = self._db.connection()
        given_again = set(rows.shown_ids(conn, snapshot.session_key, after=snapshot.taken_at))
        missing = [rid for rid in snapshot.record_ids if rid not in given_again]
        current = record_rows.records_in_scope(
            conn, missing, RecordFilter(None, every_project=True)
        )
        started = rows.first_shown_at(conn, snapshot.session_key) or snapshot.taken_at
        written = [
            r
            for r in record_rows.list_records(
                conn, RecordFilter(snapshot.project_id, since=started)
            )
            if r.project_id == snapshot.project_id and r.created_at <= snapshot.taken_at
        ]
        return CompactionReport(
            snapshot.taken_at,
            snapshot.trigger,
            len(snapshot.record_ids),
            tuple(current[rid] for rid in missing if rid in current),
            tuple(written),
            snapshot.quality_issues,
        )

    def _from_saved(self, snapshot: rows.Snapshot, saved: dict[str, Any]) -> CompactionReport:
        conn = self._db.connection()
        scope = RecordFilter(None, statuses=(Status.ACTIVE,), every_project=True)

        def load(items: list[dict[str, str]]) -> tuple[Record, ...]:
            found = record_rows.records_in_scope(conn, [i["id"] for i in items], scope)
            return tuple(found[i["id"]] for i in items if i["id"] in found)

        return CompactionReport(
            snapshot.taken_at,
            snapshot.trigger,
            int(saved["given"]),
            load(saved["lost"]),
            load(saved["written"]),
            snapshot.quality_issues,
        )


def report_text(report: CompactionReport) -> str:
    """The report as an agent reads it after the compaction."""
    lines = [
        f"contextd compaction report ({report.trigger} compaction at {report.taken_at[:16]}): "
        f"the session had been given {counted(report.given, 'record')}."
    ]
    if report.lost:
        lines.append("Not in your context any more (re-read with get_entry / contextd show):")
        lines.extend(f"- [{r.kind} {r.id}] {one_line(r.title)}" for r in report.lost)
    else:
        lines.append("Nothing it had been given is missing now.")
    if report.written:
        lines.append("Recorded in this session before the compaction:")
        lines.extend(f"- [{r.kind} {r.id}] {one_line(r.title)}" for r in report.written)
    if report.quality_issues:
        need = "needs" if report.quality_issues == 1 else "need"
        lines.append(
            f"{counted(report.quality_issues, 'record')} {need} attention (verify_quality)."
        )
    return fence("\n".join(lines))
