"""Limits that several layers state to users (the core checks them, click and MCP describe
them), kept in one place. The standard library only."""

__all__ = ["MAX_SEARCH_LIMIT"]

MAX_SEARCH_LIMIT = 200  # hits one search may return
