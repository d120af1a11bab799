"""Reading what a user or a stranger points contextd at, never more than a cap: a regular file
larger than the cap is refused from its size, unread; anything else (a device, a pipe, stdin)
gives at most cap + 1 bytes, so /dev/zero or an endless stream is refused, not swallowed."""

import os
import stat
from pathlib import Path
from typing import BinaryIO, NamedTuple

from contextd.errors import InvalidInputError

__all__ = ["MB", "Cap", "read_capped", "read_stream_capped"]

MB = 1024 * 1024
_CHUNK = MB  # read in pieces: a small input never costs the whole cap in memory


class Cap(NamedTuple):
    """The most that one kind of input may hold, and how a refusal words it."""

    size: int  # bytes
    what: str  # what is read, as in "the most {what} may be": "a bundle"
    remedy: str  # what to do about a refusal, a clause: "check that it is the right file"

    def refusal(self, name: str) -> str:
        """The sentence refusing `name` (a path, "the bundle on stdin") for being too large."""
        return (
            f"{name} is larger than {self.size / MB:g} MB, the most {self.what} may be; "
            f"{self.remedy}."
        )


def read_capped(path: Path, cap: Cap) -> bytes:
    """The bytes of `path`, which may be a regular file, a device or a pipe.

    Raises:
        OSError: it cannot be opened or read (the caller words that).
        InvalidInputError: it holds more than `cap` allows.
    """
    with path.open("rb") as handle:
        info = os.fstat(handle.fileno())
        if stat.S_ISREG(info.st_mode) and info.st_size > cap.size:
            raise InvalidInputError(cap.refusal(str(path)))
        return read_stream_capped(handle, cap, str(path))


def read_stream_capped(stream: BinaryIO, cap: Cap, name: str) -> bytes:
    """Everything `stream` gives until its end, or a refusal once it gives more than `cap`
    allows (at most cap + 1 bytes are read).

    Raises:
        OSError: reading failed.
        InvalidInputError: it gave more than `cap` allows.
    """
    chunks: list[bytes] = []
    held = 0
    while held <= cap.size:
        chunk = stream.read(min(_CHUNK, cap.size + 1 - held))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        held += len(chunk)
    raise InvalidInputError(cap.refusal(name))
