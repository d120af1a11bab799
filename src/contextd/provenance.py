"""Through what a change reaches the store, for each record's log: `cli` unless a surface
says otherwise where its request enters (`mcp claude-code`, `http alice-laptop`, `web`,
`hook`, `sync laptop`, `import`). Storage reads it when it writes a record."""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["FROM_FILES", "FROM_IMPORT", "changes_via", "current_via", "from_peer"]

FROM_FILES = "repository files"  # a teammate's records, arriving in a checkout's files
FROM_IMPORT = "import"  # ADRs, agents' memory files and the like, imported


def from_peer(peer: str) -> str:
    """A record arriving from another machine by `contextd sync`."""
    return f"sync {peer}"


_VIA: ContextVar[str] = ContextVar("contextd_changes_via", default="cli")


@contextmanager
def changes_via(source: str) -> Iterator[None]:
    """Within the block, record changes are logged as made through `source`."""
    token = _VIA.set(" ".join(source.split())[:80])
    try:
        yield
    finally:
        _VIA.reset(token)


def current_via() -> str:
    return _VIA.get()
