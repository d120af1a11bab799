"""Keeping record vectors current: what text is embedded, and embedding what is missing."""

from collections.abc import Callable, Iterator, Sequence

from contextd.clock import now
from contextd.embeddings.base import EmbeddingProvider, text_hash
from contextd.markdown import decision_section, headline
from contextd.models import Record
from contextd.retrieval.passages import PLAN, later_windows, packed, window_count
from contextd.storage import vectors as rows
from contextd.storage.records import search_text
from contextd.storage.store import Database

__all__ = ["Indexer", "embedding_text", "vector_hash"]

_BATCH = 64


def embedding_text(record: Record) -> str:
    """Title first (the local model reads the first 128 word pieces), then hints, tags and body.
    A title holding a whole ADR is led by its headline and Decision section, which say what it
    is about better than the context it opens with."""
    decided = decision_section(record.title)
    lead = [headline(record.title), decided] if decided else []
    tags = " ".join(record.tags)
    parts = [*lead, record.title, *record.retrieval_hints, tags, search_text(record)]
    return "\n".join(p for p in parts if p)


def vector_hash(text: str) -> str:
    """What a record's stored vectors were made from: its text, and for a text longer than one
    window how it was cut (so a new cut re-embeds long records only)."""
    if window_count(text):
        return text_hash(f"{text}\n{PLAN.tag}")
    return text_hash(text)


class Indexer:
    """Embeds records with one provider; unchanged text is never embedded twice."""

    def __init__(self, db: Database, provider: EmbeddingProvider) -> None:
        self.db = db
        self.provider = provider

    def vectors_for(
        self, records: Sequence[Record], progress: Callable[[int], None] | None = None
    ) -> list[rows.EmbeddingRow]:
        """Embed records, each its start and its later windows (no storage); the caller stores
        them in its own transaction."""
        texts = [embedding_text(r) for r in records]
        windows = [later_windows(t, headline(r.title)) for r, t in zip(records, texts, strict=True)]
        computed: list[rows.EmbeddingRow] = []
        for start in range(0, len(texts), _BATCH):
            batch = texts[start : start + _BATCH]
            heads = self.provider.embed_documents(batch)
            later = [w for ws in windows[start : start + _BATCH] for w in ws]
            vectors = iter(self._embed_all(later))
            for at, head in enumerate(heads, start):
                passages = [next(vectors) for _ in windows[at]]
                computed.append(
                    rows.EmbeddingRow(
                        records[at].id,
                        self.provider.id,
                        vector_hash(texts[at]),
                        head,
                        packed(passages),
                    )
                )
            if progress:
                progress(len(batch))
        return computed

    def _embed_all(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), _BATCH):
            vectors.extend(self.provider.embed_documents(texts[start : start + _BATCH]))
        return vectors

    def stale(self, records: Sequence[Record], *, force: bool = False) -> list[Record]:
        """Records whose vector is missing, made by another model, or of older text."""
        if force:
            return list(records)
        stored = rows.stored_hashes(
            self.db.connection(), self.provider.id, self.provider.dimensions
        )
        return [r for r in records if stored.get(r.id) != vector_hash(embedding_text(r))]

    def embed(
        self, records: Sequence[Record], progress: Callable[[int], None] | None = None
    ) -> int:
        """Embed and store `records` in batches, each batch one transaction: an interrupted
        run keeps what it finished, and the next one embeds only the rest (see stale)."""
        for batch in _batches(records):
            computed = self.vectors_for(batch)
            with self.db.transaction() as conn:
                rows.upsert_embeddings(conn, computed, now())
            if progress:
                progress(len(batch))
        return len(records)


def _batches(records: Sequence[Record]) -> Iterator[Sequence[Record]]:
    """Up to _BATCH records, fewer when they are long: a batch is about _BATCH texts to embed
    in all (a record and each of its later windows), so progress is shown and kept as often
    for long records as for short ones."""
    start = texts = 0
    for at, record in enumerate(records):
        texts += 1 + window_count(embedding_text(record))
        if at + 1 - start == _BATCH or texts >= _BATCH:
            yield records[start : at + 1]
            start, texts = at + 1, 0
    if start < len(records):
        yield records[start:]
