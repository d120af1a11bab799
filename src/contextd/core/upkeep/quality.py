"""The quality scan: records that would serve a later session badly, each with the facts its
fix needs (the field and its minimum, the record to merge into or link to), and the command a
person runs for it; MCP words the fix as tools."""

from collections import defaultdict
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from msgspec import Struct

from contextd.clock import to_iso
from contextd.fields import body_fields, flag_of
from contextd.models import Project, Record, topic_tags
from contextd.text.grammar import counted

if TYPE_CHECKING:  # only a type here: the prompt hook, importing this, skips the write path
    from contextd.core.reading.reader import RecordReader
    from contextd.core.upkeep.consolidation import Merge


__all__ = ["QualityIssue", "command_for", "records_flagged", "scan_quality"]


class QualityIssue(Struct, frozen=True):
    kind: str  # duplicate | thin_rationale | missing_tags | isolated | stale
    record: Record
    detail: str
    field: str | None = None  # thin_rationale: the field that says too little
    minimum: int = 0  # ... and the least it must say (characters)
    other: str | None = None  # duplicate: the record it merges into; isolated: one to link


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
            other=merge.kept.id,
        )
        for merge in duplicates or []
        for twin in merge.twins
    ]
    for record in active:
        issues += _thin(record)
        if not record.tags:
            issues.append(QualityIssue("missing_tags", record, "no tags"))
        if record.verified_at < cutoff:
            issues.append(
                QualityIssue("stale", record, f"not verified since {record.verified_at[:10]}")
            )
    issues += _isolated(active)
    return issues


def _thin(record: Record) -> list[QualityIssue]:
    """Fields below the minimum a new record must meet (older, imported or forced ones may)."""
    found = []
    for spec in body_fields(record.kind):
        value = getattr(record.body, spec.name)
        if spec.minimum and len(value) < spec.minimum:
            found.append(
                QualityIssue(
                    "thin_rationale",
                    record,
                    f"{spec.name} is {len(value)} characters (want {spec.minimum}+)",
                    field=spec.name,
                    minimum=spec.minimum,
                )
            )
    return found


def _isolated(active: list[Record]) -> list[QualityIssue]:
    """Records sharing a tag with others but linked to none of them."""
    by_tag: dict[str, list[Record]] = defaultdict(list)
    for record in active:
        for tag in topic_tags(record):
            by_tag[tag].append(record)
    linked = {(r.id, other) for r in active for other in r.related_to}
    issues = []
    for record in active:
        peers = {p.id for tag in topic_tags(record) for p in by_tag[tag] if p.id != record.id}
        if peers and not any((record.id, p) in linked or (p, record.id) in linked for p in peers):
            example = sorted(peers)[0]
            issues.append(
                QualityIssue(
                    "isolated",
                    record,
                    f"shares tags with {counted(len(peers), 'record')} but links to none",
                    other=example,
                )
            )
    return issues


def records_flagged(issues: list[QualityIssue]) -> int:
    """How many records the issues are about (one record may have several)."""
    return len({issue.record.id for issue in issues})


def command_for(issue: QualityIssue, names: Mapping[str, str] | None = None) -> str:
    """The command that mends an issue, as a person types it, naming records by `names`
    (their handles) where given (the CLI and the web view show it; MCP words its own, as
    tools)."""
    names = names or {}
    rid = names.get(issue.record.id, issue.record.id)
    other = names.get(issue.other or "", issue.other)
    if issue.kind == "duplicate":
        return f"contextd refresh --yes  (merges it into {other})"
    if issue.kind == "thin_rationale":
        flag = flag_of(issue.field or "")
        return f'contextd update {rid} {flag} "..."  ({issue.minimum}+ characters)'
    if issue.kind == "missing_tags":
        return f"contextd update {rid} --tag TAG"
    if issue.kind == "isolated":
        return f"contextd update {rid} --related {other}"
    return f"contextd verify {rid}  (or contextd archive {rid})"
