"""Restatements inside one import: the duplicate guard compares a new record with the store
only, so two entries of a source saying the same thing would both pass. The closest earlier
record of the same kind is found with one matrix product (an import can hold thousands), and
the record service's own rule decides whether it is a restatement."""

from typing import TYPE_CHECKING

from contextd.core.writing.writer import PreparedWrite, RecordWriter
from contextd.models import Kind

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Twins"]


class _Shelf:
    """The unit vectors of one kind's new records, in a matrix that grows by doubling."""

    def __init__(self) -> None:
        self.writes: list[PreparedWrite] = []
        self.matrix: npt.NDArray[np.float32] | None = None

    def closest(self, unit: "npt.NDArray[np.float32]") -> PreparedWrite | None:
        if self.matrix is None or not self.writes:
            return None
        scores = self.matrix[: len(self.writes)] @ unit
        return self.writes[int(scores.argmax())]

    def add(self, write: PreparedWrite, unit: "npt.NDArray[np.float32]") -> None:
        import numpy as np

        count = len(self.writes)
        if self.matrix is None:
            self.matrix = np.zeros((16, unit.shape[0]), dtype=np.float32)
        elif count == self.matrix.shape[0]:
            self.matrix = np.vstack([self.matrix, np.zeros_like(self.matrix)])
        self.matrix[count] = unit
        self.writes.append(write)


class Twins:
    """The new records of an import so far, to find the one a newcomer restates."""

    def __init__(self, writer: RecordWriter) -> None:
        self._writer = writer
        self._titles: dict[tuple[Kind, str], PreparedWrite] = {}
        self._shelves: dict[Kind, _Shelf] = {}

    def of(self, write: PreparedWrite) -> PreparedWrite | None:
        """The earlier new record `write` restates (the same title, or near-identical text),
        if any."""
        record = write.record
        same = self._titles.get((record.kind, record.title.casefold()))
        if same is not None:
            return same
        unit = _unit(write)
        shelf = self._shelves.get(record.kind)
        closest = shelf.closest(unit) if shelf is not None and unit is not None else None
        if closest is not None and self._writer.restate_each_other(closest, write):
            return closest
        return None

    def add(self, write: PreparedWrite) -> None:
        record = write.record
        self._titles.setdefault((record.kind, record.title.casefold()), write)
        unit = _unit(write)
        if unit is not None:
            self._shelves.setdefault(record.kind, _Shelf()).add(write, unit)


def _unit(write: PreparedWrite) -> "npt.NDArray[np.float32] | None":
    if not write.vectors:
        return None
    import numpy as np

    vector = np.asarray(write.vectors[0].vector, dtype=np.float32)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else None
