"""The rest of a long record for the meaning arm: its text after the first window, cut into
windows the model reads whole, and a record scored by its nearest window.

The local model reads ~128 word pieces, about 90 words: a record's own vector says what its
start is about and nothing of the rest. On rfc-dev (639 RFCs of 14 KB on average) scoring each
record by its nearest window of 90 words, each led by the record's headline, took the arm's
MRR from 0.304 to 0.418; windows sharing 20 words with the one before cost 28% more and scored
0.404, windows of 60 words 29% more for 0.421 (benchmarks/results/chunking.md).
"""

from msgspec import Struct

from contextd.storage import vectors
from contextd.storage.connection import Connection
from contextd.storage.vector_bytes import encode

__all__ = [
    "PLAN",
    "WINDOW_WORDS",
    "PassagePlan",
    "later_windows",
    "packed",
    "window_count",
    "with_windows",
]

WINDOW_WORDS = 90  # ~120 word pieces: within what the local model reads
OVERLAP_WORDS = 0  # words shared with the window before: more cost, no better (see above)
MOST_WINDOWS = 40  # 3,600 words after the start: more than a record of 20,000 characters holds


class PassagePlan(Struct, frozen=True):
    """How a record's text is cut; part of what its stored vectors were made from."""

    words: int = WINDOW_WORDS
    overlap: int = OVERLAP_WORDS
    most: int = MOST_WINDOWS

    @property
    def tag(self) -> str:
        return f"windows {self.words}/{self.overlap}/{self.most}"


PLAN = PassagePlan()


def later_windows(text: str, lead: str, plan: PassagePlan = PLAN) -> list[str]:
    """The windows of `text` after its first (which the record's own vector reads), each led
    by `lead` (the record's headline) so a window out of context still says what it is from;
    none for a text that fits in one window."""
    words = text.split()
    return [
        f"{lead}\n" + " ".join(words[start : start + plan.words])
        for start in _starts(len(words), plan)
    ]


def window_count(text: str, plan: PassagePlan = PLAN) -> int:
    """How many later windows `text` has (later_windows without making them)."""
    return len(_starts(len(text.split()), plan))


def _starts(words: int, plan: PassagePlan) -> range:
    step = plan.words - plan.overlap
    return range(step, words - plan.overlap, step)[: plan.most]


def packed(vectors: list[list[float]]) -> bytes | None:
    """Window vectors as stored: float32 little-endian end to end; None for none."""
    return b"".join(encode(v) for v in vectors) or None


def with_windows(
    conn: Connection, provider: str, query: list[float], cosines: dict[str, float]
) -> list[tuple[str, float]]:
    """Records found by their start's vector (by an index that holds only those), each raised
    to its nearest later window's cosine, most similar first. The windows are read for these
    records only: a record whose start is far from the query and whose words are not in it
    is not found by a window alone, as it is in SQLite's exact scan."""
    stored = vectors.stored_passages(conn, provider, len(query), list(cosines))
    best = dict(cosines)
    if stored:
        import numpy as np

        asked = np.asarray(query, dtype=np.float32)
        for record_id, blob in stored.items():
            windows = np.frombuffer(blob, dtype="<f4").reshape(-1, len(query))
            best[record_id] = max(best[record_id], float(np.max(windows @ asked)))
    return sorted(best.items(), key=lambda item: -item[1])
