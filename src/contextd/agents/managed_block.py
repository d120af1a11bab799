"""The managed block inside an agent file: finding it, replacing it, and hashing it.

Text outside the markers belongs to the user and is carried over byte for byte.
"""

import re

from msgspec import Struct

from contextd.core.workspace.textfiles import sha256_text
from contextd.errors import InvalidInputError

__all__ = [
    "BEGIN",
    "END",
    "Block",
    "block_hash",
    "find_block",
    "place_block",
    "render_block",
    "without_block",
]

BEGIN = "<!-- contextd:begin -->"
END = "<!-- contextd:end -->"
_MARKER = re.compile(r"<!--\s*contextd:(begin|end)\s*-->")


class Block(Struct, frozen=True):
    start: int  # offset of the begin marker
    end: int  # offset just past the end marker
    inner: str


def find_block(text: str, where: str) -> Block | None:
    """The one managed block in `text`, or None when there is none.

    Raises:
        InvalidInputError: the markers are unpaired, repeated or out of order.
    """
    markers = list(_MARKER.finditer(text))
    if not markers:
        return None
    kinds = [m.group(1) for m in markers]
    if kinds != ["begin", "end"]:
        raise InvalidInputError(
            f"{where} has {kinds.count('begin')} contextd:begin and {kinds.count('end')} "
            f"contextd:end markers; leave exactly one {BEGIN} ... {END} pair (or none) and "
            "run again."
        )
    begin, end = markers
    return Block(begin.start(), end.end(), text[begin.end() : end.start()])


def block_hash(inner: str) -> str:
    """Hash of a block's content, blind to line endings and trailing spaces (editors change
    those without anyone editing the text)."""
    lines = inner.replace("\r\n", "\n").strip().split("\n")
    return sha256_text("\n".join(line.rstrip() for line in lines))


def render_block(content: str) -> str:
    # A record text quoting the markers must not end the block early.
    safe = _MARKER.sub(lambda m: f"<!-- contextd-{m.group(1)} -->", content.strip())
    return f"{BEGIN}\n{safe}\n{END}"


def place_block(text: str, block: str, where: str) -> str:
    """`text` with its managed block replaced by `block`, or `block` appended when absent."""
    newline = "\r\n" if "\r\n" in text else "\n"
    block = block.replace("\n", newline)
    found = find_block(text, where)
    if found is not None:
        return text[: found.start] + block + text[found.end :]
    if not text.strip():
        return block + newline
    return text.rstrip("\r\n") + newline + newline + block + newline


def without_block(text: str, where: str) -> str:
    """`text` minus its managed block (what the user wrote)."""
    found = find_block(text, where)
    return text if found is None else text[: found.start] + text[found.end :]
