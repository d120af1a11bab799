"""refresh: keep the store true, step by step (see contextd.core.upkeep.refresh)."""

import sys
from typing import Any

import click
from msgspec.structs import asdict

from contextd.cli._context import common_options, get_app, state
from contextd.cli._output import emit
from contextd.client.printer import echo
from contextd.core.upkeep.consolidation import Cluster, Merge
from contextd.core.upkeep.refresh import RefreshReport

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
@common_options
def refresh(dry_run: bool, force_embeddings: bool, yes: bool) -> None:
    """Keep the store true: embed what lacks a current vector (a new provider or model
    re-embeds all), list duplicates (merged into the older record only with --yes or when you
    confirm), report clusters of similar records, rebuild the vector index, and forget
    deletions older than sync.tombstone_retention_days."""
    app = get_app()
    bars: list[Any] = []
    shown: list[bool] = []

    def confirm(merges: list[Merge]) -> bool:
        if yes:
            return True
        if state().json or not sys.stdin.isatty():
            return False
        while bars:  # the embedding bar is done: the question must not share its line
            bars.pop().__exit__(None, None, None)
        _print_merges(merges, merged=False)
        shown.append(True)
        twins = sum(len(m.twins) for m in merges)
        question = f"\nMerge these {twins} duplicates into their {len(merges)} older records?"
        return click.confirm(question, default=False, err=True)

    def progress(done: int, total: int) -> None:
        if not bars:  # only draw a bar once there is work
            bars.append(
                click.progressbar(length=total, label="embedding", file=sys.stderr, show_pos=True)
            )
            bars[0].__enter__()
        bars[0].update(done - bars[0].pos)

    try:
        report = app.refresher.run(
            dry_run=dry_run, force_embeddings=force_embeddings, progress=progress, confirm=confirm
        )
    finally:
        if bars:
            bars[0].__exit__(None, None, None)
    index = app.index.state()
    emit(
        _payload(report, asdict(index)),
        lambda: _print(report, index.embedded, index.records, listed=bool(shown)),
    )


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


def _print(report: RefreshReport, embedded: int, records: int, *, listed: bool) -> None:
    if report.dry_run:
        echo("Dry run: nothing was changed.")
    for step in report.steps:
        echo(f"{step.name:<11} {step.summary}")
    if not listed:
        _print_merges(report.merges, merged=report.merged)
    if report.merges and not report.merged and not report.dry_run:
        echo("\nNothing was merged: `contextd refresh --yes` merges the duplicates listed.")
    if report.clusters:
        echo("\nSimilar records to look at (update, supersede or link them):")
    for cluster in report.clusters[:_CLUSTERS_SHOWN]:
        echo(f"  cluster of {len(cluster.records)} (closest {cluster.similarity:.2f})")
        for record in cluster.records:
            echo(f"    {record.id[:13]}  {_clip(record.title)}")
    if len(report.clusters) > _CLUSTERS_SHOWN:
        echo(f"  … {len(report.clusters) - _CLUSTERS_SHOWN} more clusters (--json lists all)")
    echo(f"\n{embedded}/{records} records have a current vector.")


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
