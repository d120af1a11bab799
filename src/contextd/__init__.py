"""contextd: project memory for AI coding agents.

The library API (App, open_app, Settings, load_settings, ContextdError) is imported on first
use, so `contextd hook ...` does not pay for the whole package on every agent prompt.
"""

import os

# One BLAS thread unless the user says otherwise (read when numpy loads, so set first):
# contextd's matrices are small, and OpenBLAS's spinning helper threads made a query and a
# duplicate check 3-4x slower on a busy 2-core machine.
BLAS_THREADS_FROM_USER = "OPENBLAS_NUM_THREADS" in os.environ
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
SINGLE_BLAS_THREAD = os.environ["OPENBLAS_NUM_THREADS"] == "1"

__all__ = ["App", "ContextdError", "Settings", "load_settings", "open_app"]

_HOMES = {
    "App": "contextd.app",
    "open_app": "contextd.app",
    "Settings": "contextd.config",
    "load_settings": "contextd.config",
    "ContextdError": "contextd.errors",
}


def __getattr__(name: str) -> object:
    if name not in _HOMES:
        raise AttributeError(f"module 'contextd' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_HOMES[name]), name)
