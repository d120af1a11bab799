"""Reading a safetensors file without the safetensors package: its header, its float32
tensors as read-only views of one memory map, and rows of one tensor read on demand.

The format is an 8-byte little-endian header length, a JSON header of name -> dtype, shape and
byte range (relative to the end of the header), then the raw little-endian tensor data.
"""

import hashlib
import json
import mmap
import os
import threading
import weakref
from pathlib import Path
from typing import Any

from msgspec import Struct

__all__ = ["RowReader", "Tensor", "WeightsHeader", "file_sha256", "map_float32", "read_header"]


class Tensor(Struct, frozen=True):
    dtype: str  # "F32", "I64", ...
    shape: tuple[int, ...]
    offset: int  # from the start of the file
    length: int  # bytes


class WeightsHeader(Struct, frozen=True):
    raw: bytes  # the JSON header as stored: names, shapes and offsets
    tensors: dict[str, Tensor]


def read_header(path: Path) -> WeightsHeader:
    """The tensors of a safetensors file, with their offsets from the start of the file.

    Raises:
        OSError: the file cannot be read.
        ValueError: it is not a safetensors file.
    """
    with path.open("rb") as handle:
        size = int.from_bytes(handle.read(8), "little")
        if not 2 <= size <= 100_000_000:
            raise ValueError(f"{path} is not a safetensors file")
        raw = handle.read(size)
    start = 8 + size
    try:
        entries = json.loads(raw)
        tensors = {
            name: Tensor(
                str(spec["dtype"]),
                tuple(int(n) for n in spec["shape"]),
                start + int(spec["data_offsets"][0]),
                int(spec["data_offsets"][1]) - int(spec["data_offsets"][0]),
            )
            for name, spec in entries.items()
            if name != "__metadata__"
        }
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        raise ValueError(f"{path} is not a safetensors file") from exc
    return WeightsHeader(raw, tensors)


def map_float32(np: Any, path: Path) -> dict[str, Any]:
    """The float32 tensors as read-only numpy views of one memory map.

    Mapping instead of reading (as safetensors' numpy loader does, a copy of all 90 MB) takes
    the load from ~300 ms to ~20 ms, and only the word-embedding rows a text uses are ever
    paged in.
    """
    header = read_header(path)
    with path.open("rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    data = np.frombuffer(mapped, dtype=np.uint8)  # keeps the map alive
    return {
        name: data[t.offset : t.offset + t.length].view("<f4").reshape(t.shape)
        for name, t in header.tensors.items()
        if t.dtype == "F32"
    }


class RowReader:
    """Rows of one 2-D float32 tensor, read from the file when asked for, never mapped: what
    a process reads stays in the page cache, shared, instead of in its own memory."""

    def __init__(self, path: Path, name: str) -> None:
        """Raises:
        OSError: the file cannot be read.
        ValueError: it has no 2-D float32 tensor `name`.
        """
        tensor = read_header(path).tensors.get(name)
        if tensor is None or tensor.dtype != "F32" or len(tensor.shape) != 2:
            raise ValueError(f"{path} has no float32 table {name!r}")
        self.rows, self.width = tensor.shape
        self._offset = tensor.offset
        self._path = path
        self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        weakref.finalize(self, os.close, self._fd)
        self._lock = threading.Lock()  # for the seek and read of a system without pread

    def take(self, np: Any, ids: Any) -> Any:
        """The rows `ids` (integers of any shape), as float32 of shape ids.shape + (width,).

        Raises:
            ValueError: an id is not a row of the table.
            OSError: the file cannot be read, or ends early (it was damaged or replaced).
        """
        unique, where = np.unique(ids, return_inverse=True)
        if len(unique) and (unique[0] < 0 or unique[-1] >= self.rows):
            raise ValueError(f"token ids must be below {self.rows}")
        size = self.width * 4
        block = bytearray(len(unique) * size)
        for i, row in enumerate(unique.tolist()):
            block[i * size : (i + 1) * size] = self._read(self._offset + row * size, size)
        table = np.frombuffer(block, dtype="<f4").reshape(len(unique), self.width)
        return table[where.reshape(ids.shape)]

    def _read(self, offset: int, size: int) -> bytes:
        if hasattr(os, "pread"):
            data = os.pread(self._fd, size, offset)
        else:
            with self._lock:
                os.lseek(self._fd, offset, os.SEEK_SET)
                data = os.read(self._fd, size)
        if len(data) != size:
            raise OSError(f"{self._path} ends before the row at byte {offset}")
        return data


def file_sha256(path: Path) -> str:
    """The SHA-256 of a whole file, read in blocks (about 60 ms for the model's 90 MB)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
