"""refresh: keep the store true, step by step (see contextd.core.upkeep.refresh)."""

import sys
from typing import Any

import click
from msgspec.structs import asdict

from contextd.app import App
from contextd.cli._context import common_options, get_app, state
from contextd.cli._output import emit
from contextd.cli._progress import Bar
from contextd.core.recall.presentation import one_line
from contextd.core.upkeep.consolidation import Cluster, Merge
from contextd.core.upkeep.refresh import RefreshReport
from contextd.core.upkeep.summaries import MAX_CLUSTERS, Summarizer, Summary
from contextd.errors import ContextdError, InvalidInputError
from contextd.fields import body_fields
from contextd.models import Kind, Project, RecordDraft, body_to_dict
from contextd.text.printer import echo

__all__ = ["COMMANDS"]

_CLUSTERS_SHOWN = 10


@click.command()
@click.option("--dry-run", is_flag=True, help="Say what each step would do; change nothing.")
@click.option(
    "--force-embeddings",
    is_flag=True,
    help="Re-embed every record (after changing the embedding model).",
)
@click.option(
    "--yes",
    "-y",
    is_flag=True,
    help="Merge the duplicates found without asking (else a terminal is asked; a script only "
    "sees them listed).",
)
@click.option(
    "--summarize",
    is_flag=True,
    help="Ask the summarizer (refresh.summarizer, [chat]) for one record per cluster of similar "
    "records, to accept (--yes, --accept or on a terminal); it supersedes the cluster.",
)
@click.option(
    "--accept",
    "accepted",
    multiple=True,
    metavar="ID",
    help="With --summarize: only the cluster holding ID, its proposal accepted (repeatable).",
)
@common_options
def refresh(
    dry_run: bool,
    force_embeddings: bool,
    yes: bool,
    summarize: bool,
    accepted: tuple[str, ...],
) -> None:
    """Keep the store true: embed what lacks a current vector (a new provider or model
    re-embeds all), list duplicates (merged into the older record only with --yes or when you
    confirm), report clusters of similar records (--summarize: with a consolidated record
    proposed for each), rebuild the vector index, and forget deletions older than
    sync.tombstone_retention_days."""
    if accepted and not summarize:
        raise InvalidInputError("--accept takes a proposal of --summarize; add --summarize.")
    app = get_app()
    summarizer = app.summarizer if summarize else None  # refused before anything is done
    wanted = {app.reader.get(reference).id for reference in accepted}
    terminal = _Terminal(yes)
    try:
        report = app.refresher.run(
            dry_run=dry_run,
            force_embeddings=force_embeddings,
            progress=terminal.progress,
            confirm=terminal.confirm_merges,
        )
    finally:
        terminal.close_bar()
    summaries = None
    if summarizer is not None:
        summaries = _summaries(app, summarizer, report, wanted, yes=yes and not dry_run)
    index = app.index.state()
    payload = _payload(report, asdict(index))
    if summaries is not None:
        payload["summaries"] = [_summary(s) for s in summaries]

    def human() -> None:
        summarized = summaries is not None
        _print(
            report, index.embedded, index.records, listed=terminal.listed, clusters=not summarized
        )
        if summaries is not None:
            _print_summaries(summaries, asked=_asking(yes, wanted) and not dry_run)
            left = len(report.clusters) - MAX_CLUSTERS
            if left > 0 and not wanted:
                echo(f"\n{left} more clusters not summarized (at most {MAX_CLUSTERS} a run).")

    emit(payload, human)


class _Terminal:
    """The embedding progress bar, and the question before duplicates are merged."""

    def __init__(self, yes: bool) -> None:
        self._yes = yes
        self._bar = Bar("embedding")
        self.listed = False  # the duplicates were shown with the question

    def progress(self, done: int, total: int) -> None:
        self._bar.update(done, total)

    def close_bar(self) -> None:
        self._bar.close()

    def confirm_merges(self, merges: list[Merge]) -> bool:
        if self._yes:
            return True
        if state().json or not sys.stdin.isatty():
            return False
        self.close_bar()  # the embedding is done: the question must not share its line
        _print_merges(merges, merged=False)
        self.listed = True
        twins = sum(len(m.twins) for m in merges)
        question = f"\nMerge these {twins} duplicates into their {len(merges)} older records?"
        return click.confirm(question, default=False, err=True)


def _asking(yes: bool, wanted: set[str]) -> bool:
    """Whether a person is asked about each proposal (on a terminal, without --yes/--accept)."""
    return not (yes or wanted or state().json) and sys.stdin.isatty()


def _summaries(
    app: App, summarizer: Summarizer, report: RefreshReport, wanted: set[str], *, yes: bool
) -> list[Summary]:
    """The summarizer over the report's clusters (those holding `wanted`, when named),
    accepting as asked: all with --yes, the named ones, or each a person says yes to."""
    clusters = report.clusters
    if wanted:
        clusters = [c for c in clusters if wanted & {r.id for r in c.records}]
        if not clusters:
            raise InvalidInputError(
                "No cluster of similar records holds "
                f"{', '.join(sorted(wanted))}; `contextd refresh` lists the clusters."
            )
    asking = _asking(yes, wanted) and not report.dry_run

    def accept(cluster: Cluster, draft: RecordDraft) -> bool:
        if report.dry_run:
            return False
        if yes or wanted:
            return True
        if not asking:
            return False
        _print_proposal(cluster, draft)
        question = f"Accept it (it supersedes these {len(cluster.records)} records)?"
        return click.confirm(question, default=False, err=True)

    try:
        here: Project | None = app.current_project()
    except ContextdError:
        here = None
    return summarizer.run(clusters, accept, here)


def _payload(report: RefreshReport, index: dict[str, Any]) -> dict[str, Any]:
    steps = {s.name: s for s in report.steps}
    return {
        "dry_run": report.dry_run,
        "steps": [{"step": s.name, "summary": s.summary, **s.counts} for s in report.steps],
        "duplicates": [_merge(m) for m in report.merges],
        "merged": [_merge(m) for m in report.merges] if report.merged else [],
        "clusters": [_cluster(c) for c in report.clusters],
        "embedded": report.embedded,
        "index": index,
        "tombstones_forgotten": steps["tombstones"].counts.get("forgotten", 0),
    }


def _merge(merge: Merge) -> dict[str, Any]:
    return {
        "kept": merge.kept.id,
        "title": merge.kept.title,
        "twins": [
            {
                "id": t.record.id,
                "title": t.record.title,
                "similarity": t.similarity,
                "text_similarity": t.text_similarity,
            }
            for t in merge.twins
        ],
    }


def _cluster(cluster: Cluster) -> dict[str, Any]:
    return {
        "similarity": cluster.similarity,
        "records": [{"id": r.id, "title": r.title} for r in cluster.records],
    }


def _print(
    report: RefreshReport, embedded: int, records: int, *, listed: bool, clusters: bool
) -> None:
    if report.dry_run:
        echo("Dry run: nothing was changed.")
    for step in report.steps:
        echo(f"{step.name:<11} {step.summary}")
    if not listed:
        _print_merges(report.merges, merged=report.merged)
    if report.merges and not report.merged and not report.dry_run:
        echo("\nNothing was merged: `contextd refresh --yes` merges the duplicates listed.")
    if report.clusters and clusters:
        echo("\nSimilar records to look at (update, supersede or link them):")
    for cluster in report.clusters[: _CLUSTERS_SHOWN if clusters else 0]:
        echo(f"  cluster of {len(cluster.records)} (closest {cluster.similarity:.2f})")
        for record in cluster.records:
            echo(f"    {record.id[:13]}  {_clip(record.title)}")
    if clusters and len(report.clusters) > _CLUSTERS_SHOWN:
        echo(f"  … {len(report.clusters) - _CLUSTERS_SHOWN} more clusters (--json lists all)")
    echo(f"\n{embedded}/{records} records have a current vector.")


def _summary(summary: Summary) -> dict[str, Any]:
    draft = summary.proposal
    return {
        "records": [r.id for r in summary.cluster.records],
        "similarity": summary.cluster.similarity,
        "proposal": None
        if draft is None
        else {
            "kind": str(draft.kind),
            "title": draft.title,
            "category": draft.category,
            "body": body_to_dict(draft.body),
            "tags": list(draft.tags),
        },
        "accepted": summary.accepted.id if summary.accepted else None,
        "problem": summary.problem,
    }


def _print_summaries(summaries: list[Summary], *, asked: bool) -> None:
    if not summaries:
        echo("\nNo cluster of similar records to summarize.")
    for summary in summaries:
        if not asked and summary.proposal is not None:
            _print_proposal(summary.cluster, summary.proposal)
        elif summary.proposal is None:
            echo(f"\ncluster of {len(summary.cluster.records)}: no proposal: {summary.problem}")
        if summary.accepted is not None:
            echo(f"  accepted: {summary.accepted.id[:13]} supersedes the cluster's records")
        elif summary.problem and summary.proposal is not None:
            echo(f"  not written: {summary.problem}")
    pending = [s for s in summaries if s.proposal is not None and s.accepted is None]
    if pending and not asked and not any(s.problem for s in pending):
        echo(
            "\nNothing was accepted: `contextd refresh --summarize --accept ID` accepts the "
            "proposal for the cluster holding ID, --yes accepts all."
        )


def _print_proposal(cluster: Cluster, draft: RecordDraft) -> None:
    """A cluster and the one record proposed for it, every text shown as one safe line."""
    echo(f"\ncluster of {len(cluster.records)} (closest {cluster.similarity:.2f}):")
    for record in cluster.records:
        echo(f"    {record.id[:13]}  {_clip(record.title)}")
    label = draft.category if draft.kind is Kind.MEMORY and draft.category else str(draft.kind)
    echo(f"  proposed {label}: {one_line(draft.title)}")
    for spec in body_fields(draft.kind):
        value = getattr(draft.body, spec.name)
        if value:
            shown = "; ".join(value) if isinstance(value, tuple) else str(value)
            echo(f"    {spec.heading}: {one_line(shown)}")
    if draft.tags:
        echo(f"    Tags: {one_line(', '.join(draft.tags))}")


def _print_merges(merges: list[Merge], *, merged: bool) -> None:
    """Each kept record and the duplicates folded (or to be folded) into it, how alike."""
    for merge in merges:
        echo(f"\n{'kept' if merged else 'keep'} {merge.kept.id[:13]}  {_clip(merge.kept.title)}")
        for twin in merge.twins:
            how = (
                "same text"
                if twin.similarity is None
                else f"cosine {twin.similarity:.2f}, words {twin.text_similarity:.2f}"
            )
            echo(f"  <- {twin.record.id[:13]}  {_clip(twin.record.title)}  ({how})")


def _clip(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


COMMANDS = [refresh]
