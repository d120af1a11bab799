"""`contextd eval DIR`: score retrieval on a dataset, in a scratch store."""

import contextlib
from pathlib import Path

import click
from msgspec.structs import asdict, replace

from contextd.app import open_app, scratch_settings
from contextd.cli._context import common_options, get_settings
from contextd.cli._output import emit, table
from contextd.cli._progress import Bar
from contextd.core.workspace.local_model import find_local_model
from contextd.errors import ProviderUnavailableError
from contextd.evaluation import METRICS, Evaluator, load_dataset
from contextd.text.printer import echo

__all__ = ["COMMANDS"]


@click.command(name="eval")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--ranking",
    type=click.Choice(["hybrid", "fts", "semantic"]),
    default=None,
    help="Rank by both arms fused, or by one alone (default: search.ranking).",
)
@common_options
def evaluate(folder: Path, ranking: str | None) -> None:
    """Score retrieval on a dataset folder (corpus.jsonl + queries.jsonl) with your settings.

    The dataset is loaded into a temporary store through the normal write path; your own
    store is not touched.
    """
    corpus, queries = load_dataset(folder)
    settings = get_settings()
    if ranking is not None:
        settings = replace(settings, search=replace(settings.search, ranking=ranking))
    bars: dict[str, Bar] = {}

    def progress(stage: str, done: int, total: int) -> None:
        bar = bars.setdefault(stage, Bar(f"{stage:<8}"))
        bar.update(done, total)
        if done >= total:
            bar.close()

    with scratch_settings(settings) as scratch, open_app(scratch) as app:
        # The index build time measures indexing: the model loads (and the local model's
        # graph is built in this scratch home) before it starts.
        with contextlib.suppress(ProviderUnavailableError):
            app.index.warm()
        report = Evaluator(app.projects, app.writer, app.search).run(corpus, queries, progress)
        provider = app.indexer.provider.id if app.indexer else "none"
        model = find_local_model(scratch) if provider.startswith("local:") else None
        report.config = {
            "dataset": str(folder),
            "embeddings": provider,
            "model": model.describe() if model else None,
            "provider_note": app.provider_note,
            "search": asdict(settings.search),
            "context": asdict(settings.context),
        }

    def human() -> None:
        header = ["", *METRICS, "p50_ms", "p95_ms", "n"]
        rows = [header, _row("overall", report.overall)]
        rows += [_row(name, values) for name, values in report.by_category.items()]
        table(rows, clip_column=None)
        echo(
            f"\nindex build {report.index_build_s:.1f} s · embeddings "
            f"{report.config['embeddings']} · ranking {settings.search.ranking}"
        )
        if report.config["model"]:
            echo(f"model {report.config['model']}")
        if report.config["provider_note"]:
            echo(f"note: {report.config['provider_note']}")
        for note in report.notes:
            echo(f"note: {note}")

    emit(report.as_dict(), human)


def _row(name: str, values: dict[str, float]) -> list[str]:
    return [
        name,
        *(f"{values[m]:.3f}" for m in METRICS),
        f"{values['p50_ms']:.1f}",
        f"{values['p95_ms']:.1f}",
        str(int(values["n"])),
    ]


COMMANDS = [evaluate]
