"""The project folder an agent names in the environment of what it starts.

Claude Code sets CLAUDE_PROJECT_DIR for its hooks and its stdio MCP servers; Gemini CLI sets
GEMINI_PROJECT_DIR (and CLAUDE_PROJECT_DIR as an alias) for its hooks; Cursor sets
CURSOR_PROJECT_DIR (and the same alias) for its hooks. The standard library only: the hook
reads these on every prompt. Callers hand in the environment; nothing here reads it.
"""

import os
from collections.abc import Mapping

__all__ = ["PROJECT_DIR_VARIABLES", "project_dirs"]

PROJECT_DIR_VARIABLES = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CURSOR_PROJECT_DIR")


def project_dirs(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The absolute folders these variables name, in the order above, each once."""
    found: dict[str, None] = {}
    for name in PROJECT_DIR_VARIABLES:
        value = environ.get(name, "")
        if value and os.path.isabs(value):
            found.setdefault(os.path.normpath(value))
    return tuple(found)
