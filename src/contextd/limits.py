"""Limits that several layers state to users (the core checks them, click and MCP describe
them), kept in one place. The standard library only."""

__all__ = [
    "MAX_HOOK_PAYLOAD",
    "MAX_SEARCH_LIMIT",
    "MIN_PROBLEM_CHARS",
    "MIN_PURPOSE_CHARS",
    "MIN_REASON_CHARS",
    "MIN_WHY_CHARS",
]

MAX_SEARCH_LIMIT = 200  # hits one search may return
MAX_HOOK_PAYLOAD = 4 * 1024 * 1024  # bytes of an agent's hook payload read from stdin

# The least a rationale must say to stop a later session from undoing it (characters).
MIN_PROBLEM_CHARS = 40  # a decision's problem
MIN_WHY_CHARS = 60  # a decision's why_chosen
MIN_REASON_CHARS = 40  # a constraint's reason
MIN_PURPOSE_CHARS = 20  # a pipeline's purpose
