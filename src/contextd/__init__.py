"""contextd: project memory for AI coding agents.

The library API (App, open_app, Settings, load_settings, ContextdError) is imported on first
use, so `contextd hook ...` does not pay for the whole package on every agent prompt.
"""

__all__ = ["DISTRIBUTION", "App", "ContextdError", "Settings", "load_settings", "open_app"]

# The name contextd is installed under from the package index (`contextd` there is another
# project's); the command and this package are `contextd`.
DISTRIBUTION = "contextd-memory"

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
