"""A model-free fallback: feature hashing of words, word pairs and character trigrams.

It relates texts that share words or word pieces, never synonyms; it needs no download and no
numpy, and it is deterministic, which also makes it the provider of fast tests.
"""

import hashlib
import math
import re

from contextd.models import Probe

__all__ = ["HashingEmbedder"]

_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """Signed feature hashing into `dimensions` buckets, log-scaled, L2-normalised."""

    def __init__(self, dimensions: int = 384) -> None:
        self.dimensions = dimensions
        self.id = f"hashing:v1:{dimensions}"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._embed(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._embed(text)

    def warm(self) -> None:
        """Nothing to load."""

    def probe(self, timeout_s: float) -> Probe:
        return Probe("ok", "computed here, no model or endpoint to ask")

    def _embed(self, text: str) -> list[float]:
        counts: dict[int, float] = {}
        words = [w.lower() for w in _WORD.findall(text)]
        features = [f"w:{w}" for w in words]
        features += [f"b:{a} {b}" for a, b in zip(words, words[1:], strict=False)]
        for word in words:
            padded = f"<{word}>"
            features += [f"c:{padded[i : i + 3]}" for i in range(max(len(padded) - 2, 1))]
        for feature in features:
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            bucket = value % self.dimensions
            weight = 1.0 if feature[0] != "c" else 0.5
            counts[bucket] = counts.get(bucket, 0.0) + (weight if value >> 63 else -weight)
        vector = [0.0] * self.dimensions
        for bucket, count in counts.items():
            vector[bucket] = math.copysign(math.log1p(abs(count)), count)
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]
