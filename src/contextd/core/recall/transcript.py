"""An agent's session transcript, read for the extractor: bounded, and as data.

Only the part after `offset` (what an earlier reading left) is read, at most `cap` bytes of
it (the newest, when more waits), and only whole lines. The file is opened without following
a symbolic link and must be a regular file of this user: a hook payload names the path, and
nothing else of the machine's may be read through it. Claude Code writes JSON Lines (one
entry a line: a user or assistant message, a tool call or its result); each entry becomes one
line of conversation, clipped, and a line that is not such an entry is skipped and counted.
"""

import json
import os
import stat
from pathlib import Path
from typing import Any

from msgspec import Struct

from contextd.errors import InvalidInputError

__all__ = ["TranscriptPart", "read_since"]

_TEXT_CHARS = 2000  # of one message
_TOOL_CHARS = 300  # of a tool call's input or a tool's result: what was done, not its output


class TranscriptPart(Struct, frozen=True):
    text: str  # the conversation, one entry a line ("user: ...", "assistant: ...")
    end: int  # the offset after the last whole line read: where the next reading starts
    skipped: int  # bytes of the unread stretch left out (older than the cap allowed)
    entries: int
    malformed: int  # lines that were not an entry of a transcript


def read_since(path: Path, offset: int, cap: int) -> TranscriptPart:
    """The conversation written to `path` after `offset`.

    Raises:
        InvalidInputError: the path cannot be opened, is a link, not a regular file, or
            another user's.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        handle = os.open(path, flags)
    except OSError as exc:
        raise InvalidInputError(
            f"The transcript {path.name} cannot be opened ({exc.strerror or 'error'}); it is "
            "read only as a regular file, not through a link."
        ) from None
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidInputError(f"The transcript {path.name} is not a regular file.")
        if info.st_uid != os.getuid():
            raise InvalidInputError(f"The transcript {path.name} belongs to another user.")
        size = info.st_size
        if offset > size:
            offset = 0  # shorter than what was read: a new file in its place
        start = max(offset, size - cap)
        data = os.pread(handle, size - start, start) if size > start else b""
    finally:
        os.close(handle)
    skipped = start - offset
    if skipped and b"\n" in data:
        data = data[data.index(b"\n") + 1 :]  # the first line began before the cap
        start = size - len(data)
    last = data.rfind(b"\n")
    if last < 0:
        # No line ends here: a line still being written waits for the next reading, unless
        # it alone fills the cap (then it is passed over, or it would block every reading).
        end = start + len(data) if len(data) >= cap else start
        return TranscriptPart("", end, skipped, 0, 1 if end > start else 0)
    lines = data[: last + 1].splitlines()
    texts: list[str] = []
    malformed = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            malformed += 1
            continue
        said = _entry_text(entry)
        if said is None:
            malformed += 1
        texts.extend(said or ())
    return TranscriptPart("\n".join(texts), start + last + 1, skipped, len(texts), malformed)


def _entry_text(entry: object) -> list[str] | None:
    """The lines of one transcript entry; None when it is not one (an empty list: an entry
    with nothing said, such as a file snapshot or a summary)."""
    if not isinstance(entry, dict):
        return None
    message = entry.get("message")
    if isinstance(message, dict):
        role = message.get("role") or entry.get("type")
        content = message.get("content")
    elif "role" in entry:  # a plain chat message
        role, content = entry.get("role"), entry.get("content")
    elif "type" in entry:
        return []  # Claude Code's other entries: summaries, snapshots, system notes
    else:
        return None
    if role not in ("user", "assistant"):
        return []
    return _content_lines(str(role), content)


def _content_lines(role: str, content: object) -> list[str]:
    if isinstance(content, str):
        return [f"{role}: {_clip(content, _TEXT_CHARS)}"] if content.strip() else []
    if not isinstance(content, list):
        return []
    lines = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            lines.append(f"{role}: {_clip(block['text'], _TEXT_CHARS)}")
        elif kind == "tool_use":
            name = _clip(str(block.get("name") or "tool"), 60)
            lines.append(f"tool call {name}: {_clip(_compact(block.get('input')), _TOOL_CHARS)}")
        elif kind == "tool_result":
            result = _result_text(block.get("content"))
            if result:
                lines.append(f"tool result: {_clip(result, _TOOL_CHARS)}")
    return lines


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text") for b in content if isinstance(b, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def _compact(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return ""


def _clip(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
