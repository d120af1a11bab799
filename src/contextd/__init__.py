"""contextd: project memory for AI coding agents."""

from contextd.app import App, open_app
from contextd.config import Settings, load_settings
from contextd.errors import ContextdError

__all__ = ["App", "ContextdError", "Settings", "load_settings", "open_app"]
