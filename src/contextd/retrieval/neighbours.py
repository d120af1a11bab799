"""Pairs of records whose vectors are close: every pair inside each group, in blocks, so a
store of 10k records needs neither a 10k x 10k matrix nor 10k separate searches."""

from collections import defaultdict
from collections.abc import Mapping

from contextd.storage.vectors import VectorBlock

__all__ = ["close_pairs"]

_BLOCK = 512


def close_pairs(
    block: VectorBlock,
    dimensions: int,
    group_of: Mapping[str, object],
    threshold: float,
) -> list[tuple[str, str, float]]:
    """(a, b, cosine) for every two records of the same group at or above `threshold`.

    `group_of` names each record's group; records missing from it are left out.
    """
    import numpy as np  # Deferred: only maintenance commands compare every pair.

    matrix = np.frombuffer(block.data, dtype="<f4").reshape(-1, dimensions)
    rows: dict[object, list[int]] = defaultdict(list)
    for at, record_id in enumerate(block.record_ids):
        if record_id in group_of:
            rows[group_of[record_id]].append(at)
    found: list[tuple[str, str, float]] = []
    for members in rows.values():
        if len(members) < 2:
            continue
        vectors = matrix[members]
        for start in range(0, len(members), _BLOCK):
            scores = vectors[start : start + _BLOCK] @ vectors.T
            for i, j in zip(*np.nonzero(scores >= threshold), strict=True):
                if start + i < j:
                    a, b = block.record_ids[members[start + i]], block.record_ids[members[j]]
                    found.append((a, b, float(scores[i, j])))
    return found
