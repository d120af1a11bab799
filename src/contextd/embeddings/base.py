"""The EmbeddingProvider protocol every provider meets, and the text-hash cache key."""

import hashlib
from typing import Protocol, runtime_checkable

from contextd.models import Probe

__all__ = ["EmbeddingProvider", "text_hash"]


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns text into unit-length vectors of a fixed width."""

    @property
    def id(self) -> str:
        """Provider and model, e.g. `local:all-MiniLM-L6-v2`; vectors of another id are stale."""
        ...

    @property
    def dimensions(self) -> int: ...

    def embed_documents(self, texts: list[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...

    def warm(self) -> None:
        """Get ready for many calls (a resident process): load now, favouring each call's
        speed over the load's."""
        ...

    def probe(self, timeout_s: float) -> Probe:
        """Whether it can make a vector now, asked within about `timeout_s`."""
        ...


def text_hash(text: str) -> str:
    """The key that decides whether a record's text must be embedded again."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
