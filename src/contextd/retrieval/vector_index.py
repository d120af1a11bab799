"""Exact cosine kNN over the SQLite copy of the vectors, from a numpy matrix kept in memory."""

import threading
from typing import Any, NamedTuple, Protocol

from msgspec import Struct

from contextd.models import Probe, Reach
from contextd.storage import vectors as rows
from contextd.storage.store import Database

__all__ = ["Centre", "SqliteVectorIndex", "VectorIndex"]


class Centre(Struct, frozen=True):
    """Where the vectors in a reach lean: the unit direction of their mean, and how far the
    average one leans that way (the mean's length, as every vector is unit length)."""

    direction: list[float]
    lean: float
    count: int  # how many vectors the mean is of


class VectorIndex(Protocol):
    """Nearest records by cosine; SQLite holds the authoritative vectors behind every index."""

    backend: str  # where the vectors are searched, as a person would name it

    @property
    def note(self) -> str | None:
        """Why the index is answering in a degraded way right now, if it is."""
        ...

    def search(
        self, query: list[float], reach: Reach, limit: int, *, starts_only: bool = False
    ) -> list[tuple[str, float]]:
        """Record ids in `reach` (the project's, its group's, the global ones), most similar
        first: a long record as near as its start or its nearest later window, or (with
        `starts_only`) as its start alone."""
        ...

    def similarity(
        self, query: list[float], record_ids: list[str], *, starts_only: bool = False
    ) -> dict[str, float]:
        """The cosine of each given record that has a vector, as `search` scores it."""
        ...

    def vectors_of(self, record_ids: list[str]) -> dict[str, list[float]]: ...

    def centre(self, reach: Reach) -> Centre | None:
        """Where the vectors in `reach` lean; None when it holds none."""
        ...

    def rebuild(self) -> int:
        """Make the index match SQLite from scratch; returns how many vectors it holds."""
        ...

    def load(self, *, resident: bool = False) -> None:
        """Read now what the first search would read (only an index kept in memory has
        anything to read); `resident`: this process keeps it and adds to it (a daemon, an
        MCP server)."""
        ...

    def probe(self, timeout_s: float) -> Probe:
        """Whether the place the vectors are searched answers now, asked within `timeout_s`."""
        ...

    def close(self) -> None: ...


class _WindowRows(NamedTuple):
    """Long records' later windows at one moment (see contextd.retrieval.passages): each
    record's rows together, in the order of its position among the records."""

    rows: Any  # float32 (windows, dimensions)
    owners: Any  # one record position per record with windows, ascending
    starts: Any  # the first row of each of those records

    def raise_to_nearest(self, scores: Any, query: Any) -> None:
        """Raise each record's score to its nearest window's cosine, in place."""
        import numpy as np

        if len(self.owners):
            nearest = np.maximum.reduceat(self.rows @ query, self.starts)
            scores[self.owners] = np.maximum(scores[self.owners], nearest)


class _Windows:
    """The later windows of the matrix's long records, replaced whole when they change (a
    search reads the rows it was given while a write makes new ones)."""

    def __init__(self, dimensions: int) -> None:
        import numpy as np

        self.dimensions = dimensions
        self.spans: dict[int, tuple[int, int]] = {}  # record position -> its rows
        self.now = _WindowRows(
            np.zeros((0, dimensions), dtype=np.float32),
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
        )

    def held(self, positions: set[int]) -> bool:
        return any(p in self.spans for p in positions)

    def replace(self, changed: "dict[int, bytes | None]") -> None:
        """Set the windows of the records at these positions (None: it has none now)."""
        import numpy as np

        rows = self.now.rows
        blocks = {p: rows[a:b] for p, (a, b) in self.spans.items() if p not in changed}
        for position, blob in changed.items():
            if blob:
                blocks[position] = np.frombuffer(blob, dtype="<f4").reshape(-1, self.dimensions)
        ordered = sorted(blocks.items())
        sizes = [len(block) for _, block in ordered]
        starts = np.cumsum([0, *sizes[:-1]], dtype=np.int64)[: len(ordered)]
        self.spans = {
            p: (int(a), int(a) + n) for (p, _), a, n in zip(ordered, starts, sizes, strict=True)
        }
        self.now = _WindowRows(
            np.concatenate([block for _, block in ordered]) if ordered else rows[:0],
            np.fromiter((p for p, _ in ordered), dtype=np.int64, count=len(ordered)),
            starts,
        )

    def nearest(self, position: int, query: Any) -> float | None:
        """The cosine of the record's nearest window; None when it has none."""
        span = self.spans.get(position)
        if span is None:
            return None
        return float((self.now.rows[span[0] : span[1]] @ query).max())


class _Matrix:
    """Vectors in rows of a buffer with room to grow, so appends cost little."""

    def __init__(self, dimensions: int) -> None:
        import numpy as np

        self.dimensions = dimensions
        self.generation = (0, 0)
        self.ids: list[str] = []
        self.position: dict[str, int] = {}
        self.project_codes: dict[str, int] = {}
        self._projects = np.zeros(0, dtype=np.int32)  # 0 = global
        self._vectors = np.zeros((0, dimensions), dtype=np.float32)
        self._sums: dict[int, tuple[Any, int]] = {}  # project code -> (sum of vectors, count)
        self.windows = _Windows(dimensions)  # long records' later windows

    @classmethod
    def load(cls, block: rows.VectorBlock, dimensions: int) -> "_Matrix":
        """A matrix over `block`'s buffer itself (no copy)."""
        import numpy as np

        matrix = cls(dimensions)
        codes = matrix.project_codes
        matrix._vectors = np.frombuffer(block.data, dtype="<f4").reshape(-1, dimensions)
        matrix._projects = np.fromiter(
            (0 if p is None else codes.setdefault(p, len(codes) + 1) for p in block.project_ids),
            dtype=np.int32,
            count=len(block.project_ids),
        )
        matrix.ids = list(block.record_ids)
        matrix.position = dict(zip(matrix.ids, range(len(matrix.ids)), strict=True))
        matrix.windows.replace(dict(block.passages))
        return matrix

    @property
    def vectors(self) -> Any:
        return self._vectors[: len(self.ids)]

    @property
    def projects(self) -> Any:
        return self._projects[: len(self.ids)]

    def centre(self, codes: list[int]) -> Centre | None:
        """Where the vectors of these project codes (and the global ones) lean."""
        import numpy as np

        total, count = np.zeros(self.dimensions, dtype=np.float64), 0
        for code in {0, *codes}:
            part, members = self._sum_of(code)
            total += part
            count += members
        if count == 0:
            return None
        mean = total / count
        length = float(np.linalg.norm(mean))
        if length == 0.0:
            return None
        return Centre((mean / length).tolist(), length, count)

    def _sum_of(self, code: int) -> tuple[Any, int]:
        """The sum of one project code's vectors: one pass over the matrix, kept until the
        vectors change."""
        import numpy as np

        if code not in self._sums:
            members = self.projects == code
            # A product with the 0/1 mask sums the rows without copying them (150 MiB at 100k).
            total = members.astype(np.float32) @ self.vectors
            self._sums[code] = (total.astype(np.float64), int(np.count_nonzero(members)))
        return self._sums[code]

    def make_room(self) -> None:
        """Room for a quarter more vectors, now. Left untouched, the room is not resident
        until used; growing at the first new record instead held both copies at once
        (+15 MiB at 10k records), at a resident process's busiest, and set its peak."""
        count = len(self.ids)
        self._reserve(count + count // 4 + 64)

    def apply(self, stored: list[rows.StoredVector]) -> None:
        """Add new vectors and overwrite replaced ones (rows of another model are skipped)."""
        mine = [s for s in stored if s.vector is not None]
        if not mine:
            return
        self._sums.clear()
        fresh = [s for s in mine if s.record_id not in self.position]
        self._reserve(len(self.ids) + len({s.record_id for s in fresh}))
        replaced = {self.position[s.record_id] for s in mine if s.record_id in self.position}
        if len(fresh) == len(mine):  # only new records: one copy for all
            self._append(fresh)
        else:
            self._overwrite(mine)
        changed = {self.position[s.record_id]: s.passages for s in mine}
        if any(changed.values()) or self.windows.held(replaced):
            self.windows.replace(changed)

    def _overwrite(self, mine: list[rows.StoredVector]) -> None:
        import numpy as np

        for item in mine:
            assert item.vector is not None
            at = self.position.get(item.record_id)
            if at is None:
                at = self.position[item.record_id] = len(self.ids)
                self.ids.append(item.record_id)
                code = 0
                if item.project_id is not None:
                    code = self.project_codes.setdefault(
                        item.project_id, len(self.project_codes) + 1
                    )
                self._projects[at] = code
            self._vectors[at] = np.frombuffer(item.vector, dtype="<f4")

    def _append(self, fresh: list[rows.StoredVector]) -> None:
        import numpy as np

        start, end = len(self.ids), len(self.ids) + len(fresh)
        blob = b"".join(s.vector or b"" for s in fresh)
        self._vectors[start:end] = np.frombuffer(blob, dtype="<f4").reshape(-1, self.dimensions)
        codes = self.project_codes
        self._projects[start:end] = [
            0 if s.project_id is None else codes.setdefault(s.project_id, len(codes) + 1)
            for s in fresh
        ]
        self.ids.extend(s.record_id for s in fresh)
        self.position.update((s.record_id, start + i) for i, s in enumerate(fresh))

    def _reserve(self, size: int) -> None:
        import numpy as np

        capacity = len(self._vectors)
        if size <= capacity and self._vectors.flags.writeable:
            return
        # A quarter more, not double: 10k vectors are 15 MiB a resident process keeps, and a
        # copy of them costs a few milliseconds once per 2,500 new records.
        grown = max(size, capacity + capacity // 4, 64) if size > capacity else capacity
        vectors = np.zeros((grown, self.dimensions), dtype=np.float32)
        vectors[:capacity] = self._vectors
        projects = np.zeros(grown, dtype=np.int32)
        projects[:capacity] = self._projects
        self._vectors, self._projects = vectors, projects


class SqliteVectorIndex:
    """Reads every vector of one provider once, then only what was stored since."""

    note: str | None = None

    backend = "sqlite (exact numpy scan)"

    def probe(self, timeout_s: float) -> Probe:
        """The vectors are in the store's own file, which answered to open."""
        stats = rows.vector_stats(self._db.connection(), self._provider_id, self._dimensions)
        return Probe("ok", f"{stats.current} vectors in the store's file")

    def __init__(self, db: Database, provider_id: str, dimensions: int) -> None:
        self._db = db
        self._provider_id = provider_id
        self._dimensions = dimensions
        self._matrix: _Matrix | None = None
        self._token: tuple[int, int] | None = None
        self._resident = False
        self._closed = False
        self._lock = threading.Lock()

    def search(
        self, query: list[float], reach: Reach, limit: int, *, starts_only: bool = False
    ) -> list[tuple[str, float]]:
        """Record ids in `reach` (the project's, its group's, the global ones), most similar
        first (see VectorIndex.search)."""
        import numpy as np  # Deferred: vectors are the only numpy user on the search path.

        with self._lock:
            matrix = self._current()
            ids, vectors, projects = matrix.ids, matrix.vectors, matrix.projects
            windows = matrix.windows.now
            codes = [matrix.project_codes.get(owner, -1) for owner in reach.owners]
        if not len(vectors):
            return []
        # A record is as near as its start or its nearest later window, whichever is nearer.
        asked = np.asarray(query, dtype=np.float32)
        scores = vectors @ asked
        if not starts_only:
            windows.raise_to_nearest(scores, asked)
        allowed = (projects == 0) | np.isin(projects, codes)
        count = min(limit, int(np.count_nonzero(allowed)))
        if count <= 0:
            return []
        scores[~allowed] = -np.inf
        top = np.argpartition(-scores, count - 1)[:count]
        top = top[np.argsort(-scores[top])]
        return [(ids[i], float(scores[i])) for i in top]

    def similarity(
        self, query: list[float], record_ids: list[str], *, starts_only: bool = False
    ) -> dict[str, float]:
        """Cosine of the query with each given record that has a vector (see search)."""
        import numpy as np

        asked = np.asarray(query, dtype=np.float32)
        with self._lock:
            matrix = self._current()
            positions = [
                (rid, matrix.position[rid]) for rid in record_ids if rid in matrix.position
            ]
            if not positions:
                return {}
            scores = matrix.vectors[[p for _, p in positions]] @ asked
            found = {}
            for (rid, position), score in zip(positions, scores, strict=True):
                window = None if starts_only else matrix.windows.nearest(position, asked)
                found[rid] = float(score) if window is None else max(float(score), window)
        return found

    def vectors_of(self, record_ids: list[str]) -> dict[str, list[float]]:
        with self._lock:
            matrix = self._current()
            return {
                rid: matrix.vectors[matrix.position[rid]].tolist()
                for rid in record_ids
                if rid in matrix.position
            }

    def centre(self, reach: Reach) -> Centre | None:
        with self._lock:
            matrix = self._current()
            codes = [matrix.project_codes[o] for o in reach.owners if o in matrix.project_codes]
            return matrix.centre(codes)

    def rebuild(self) -> int:
        with self._lock:
            self._matrix, self._token = None, None
            return len(self._current().ids)

    def load(self, *, resident: bool = False) -> None:
        with self._lock:
            if self._closed:  # a warming thread that outlived its server's store
                return
            self._resident = self._resident or resident
            matrix = self._current()
            if resident:
                matrix.make_room()

    def close(self) -> None:
        """Let the matrix go; a load under way finishes first, so the store closes after it."""
        with self._lock:
            self._matrix, self._closed = None, True

    def _current(self) -> _Matrix:
        """The matrix as of the last commit (call with the lock held)."""
        token = self._db.change_token()
        if self._matrix is not None and self._token == token:
            return self._matrix
        conn = self._db.connection()
        current = rows.generation(conn)
        matrix = self._matrix
        if matrix is not None and matrix.generation != current:
            after = matrix.generation[1]
            stored = rows.load_vectors(conn, self._provider_id, self._dimensions, after)
            if _only_added(matrix, stored, current):
                matrix.apply(stored)
            else:
                matrix = None
        if matrix is None:
            block = rows.load_block(conn, self._provider_id, self._dimensions)
            matrix = _Matrix.load(block, self._dimensions)
            del block  # so that make_room can let the buffer go
            if self._resident:
                matrix.make_room()
        matrix.generation = current
        self._matrix = matrix
        self._token = token
        return matrix


def _only_added(matrix: _Matrix, stored: list[rows.StoredVector], current: tuple[int, int]) -> bool:
    """Whether the vectors stored since `matrix` explain the new row count, i.e. nothing
    was removed (a removal is rare: it costs a full reload)."""
    if any(s.vector is None and s.record_id in matrix.position for s in stored):
        return False  # one of its vectors was replaced by another model's
    replaced = sum(1 for s in stored if s.record_id in matrix.position)
    return matrix.generation[0] - replaced + len(stored) == current[0]
