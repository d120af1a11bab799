"""Limits that several layers state to users (the core checks them, click and MCP describe
them), kept in one place. The standard library only."""

__all__ = [
    "MAX_HOOK_PAYLOAD",
    "MAX_SEARCH_LIMIT",
]

MAX_SEARCH_LIMIT = 200  # hits one search may return
MAX_HOOK_PAYLOAD = 4 * 1024 * 1024  # bytes of an agent's hook payload read from stdin
