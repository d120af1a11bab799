"""The quality scan: records that would serve a later session badly, each with its fix."""

from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from msgspec import Struct

from contextd.clock import to_iso
from contextd.models import (
    ConstraintBody,
    DecisionBody,
    PipelineBody,
    Project,
    Record,
)

if TYPE_CHECKING:  # only a type here: the prompt hook, importing this, skips the write path
    from contextd.core.reading.reader import RecordReader
    from contextd.core.upkeep.consolidation import Merge


__all__ = ["QualityIssue", "scan_quality"]

# The minimums new records must meet; older, imported or forced ones may fall short.
_THIN = (("problem", 40), ("why_chosen", 60), ("reason", 40), ("purpose", 20))
_FLAG = {
    "problem": "--problem",
    "why_chosen": "--why",
    "reason": "--reason",
    "purpose": "--purpose",
}


class QualityIssue(Struct, frozen=True):
    kind: str  # duplicate | thin_rationale | missing_tags | isolated | stale
    record: Record
    detail: str
    fix: str


def scan_quality(
    records: "RecordReader",
    project: Project,
    stale_days: int,
    active: list[Record] | None = None,
    duplicates: "list[Merge] | None" = None,
) -> list[QualityIssue]:
    """Every active record of the project (and global ones), or those of `active`, with what
    is wrong and the fix; and each duplicate in `duplicates` (as consolidation found them)."""
    active = records.list_records(project) if active is None else active
    cutoff = to_iso(datetime.now(UTC) - timedelta(days=stale_days))
    issues: list[QualityIssue] = [
        QualityIssue(
            "duplicate",
            twin.record,
            f"repeats the older {merge.kept.id} ("
            + ("same text" if twin.similarity is None else f"{twin.similarity:.0%} alike")
            + ")",
            f"contextd refresh  (merges it into {merge.kept.id})",
        )
        for merge in duplicates or []
        for twin in merge.twins
    ]
    for record in active:
        issues += _thin(record)
        if not record.tags:
            issues.append(
                QualityIssue(
                    "missing_tags", record, "no tags", f"contextd update {record.id} --tag TAG"
                )
            )
        if record.verified_at < cutoff:
            issues.append(
                QualityIssue(
                    "stale",
                    record,
                    f"not verified since {record.verified_at[:10]}",
                    f"contextd verify {record.id}  (or contextd archive {record.id})",
                )
            )
    issues += _isolated(active)
    return issues


def _thin(record: Record) -> list[QualityIssue]:
    body = record.body
    if not isinstance(body, DecisionBody | ConstraintBody | PipelineBody):
        return []
    found = []
    for name, minimum in _THIN:
        value = getattr(body, name, None)
        if value is not None and len(value) < minimum:
            found.append(
                QualityIssue(
                    "thin_rationale",
                    record,
                    f"{name} is {len(value)} characters (want {minimum}+)",
                    f'contextd update {record.id} {_FLAG[name]} "..."',
                )
            )
    return found


def _isolated(active: list[Record]) -> list[QualityIssue]:
    """Records sharing a tag with others but linked to none of them."""
    by_tag: dict[str, list[Record]] = defaultdict(list)
    for record in active:
        for tag in record.tags:
            by_tag[tag].append(record)
    linked = {(r.id, other) for r in active for other in r.related_to}
    issues = []
    for record in active:
        peers = {p.id for tag in record.tags for p in by_tag[tag] if p.id != record.id}
        if peers and not any((record.id, p) in linked or (p, record.id) in linked for p in peers):
            example = sorted(peers)[0]
            issues.append(
                QualityIssue(
                    "isolated",
                    record,
                    f"shares tags with {len(peers)} records but links to none",
                    f"contextd update {record.id} --related {example}",
                )
            )
    return issues
