"""refresh: keep the store true, step by step (see contextd.core.upkeep.refresh)."""

import sys
from typing import Any

import click
from msgspec.structs import asdict

from contextd.cli._context import common_options, get_app
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
@common_options
def refresh(dry_run: bool, force_embeddings: bool) -> None:
    """Keep the store true: embed what lacks a current vector (a new provider or model
    re-embeds all), merge duplicates into the older record, report clusters of similar
    records, rebuild the vector index, and forget deletions older than
    sync.tombstone_retention_days."""
    app = get_app()
    bars: list[Any] = []

    def progress(done: int, total: int) -> None:
        if not bars:  # only draw a bar once there is work
            bars.append(
                click.progressbar(length=total, label="embedding", file=sys.stderr, show_pos=True)
            )
            bars[0].__enter__()
        bars[0].update(done - bars[0].pos)

    try:
        report = app.refresher.run(
            dry_run=dry_run, force_embeddings=force_embeddings, progress=progress
        )
    finally:
        if bars:
            bars[0].__exit__(None, None, None)
    state = app.index.state()
    emit(_payload(report, asdict(state)), lambda: _print(report, state.embedded, state.records))


def _payload(report: RefreshReport, index: dict[str, Any]) -> dict[str, Any]:
    steps = {s.name: s for s in report.steps}
    return {
        "dry_run": report.dry_run,
        "steps": [{"step": s.name, "summary": s.summary, **s.counts} for s in report.steps],
        "merged": [_merge(m) for m in report.merges],
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
            {"id": t.record.id, "title": t.record.title, "similarity": t.similarity}
            for t in merge.twins
        ],
    }


def _cluster(cluster: Cluster) -> dict[str, Any]:
    return {
        "similarity": cluster.similarity,
        "records": [{"id": r.id, "title": r.title} for r in cluster.records],
    }


def _print(report: RefreshReport, embedded: int, records: int) -> None:
    if report.dry_run:
        echo("Dry run: nothing was changed.")
    for step in report.steps:
        echo(f"{step.name:<11} {step.summary}")
    for merge in report.merges:
        echo(
            f"\n{'kept' if not report.dry_run else 'keep'} {merge.kept.id[:13]}  "
            f"{_clip(merge.kept.title)}"
        )
        for twin in merge.twins:
            how = "same text" if twin.similarity is None else f"{twin.similarity:.2f}"
            echo(f"  <- {twin.record.id[:13]}  {_clip(twin.record.title)}  ({how})")
    if report.clusters:
        echo("\nSimilar records to look at (update, supersede or link them):")
    for cluster in report.clusters[:_CLUSTERS_SHOWN]:
        echo(f"  cluster of {len(cluster.records)} (closest {cluster.similarity:.2f})")
        for record in cluster.records:
            echo(f"    {record.id[:13]}  {_clip(record.title)}")
    if len(report.clusters) > _CLUSTERS_SHOWN:
        echo(f"  … {len(report.clusters) - _CLUSTERS_SHOWN} more clusters (--json lists all)")
    echo(f"\n{embedded}/{records} records have a current vector.")


def _clip(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


COMMANDS = [refresh]
