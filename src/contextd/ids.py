"""Time-ordered record ids (UUID version 7), unique across machines without coordination."""

import os
import re
import threading
import time

__all__ = ["MIN_PREFIX", "is_handle", "is_id", "is_slug", "new_id"]

MIN_PREFIX = 8
MAX_SLUG = 64

# The canonical lower-case 8-4-4-4-12 form every id of a record, project or session has.
_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# A record's handle: a kind letter and a number (D12), as storage.handles gives them.
_HANDLE = re.compile(r"[A-Za-z][1-9][0-9]{0,11}")
# What slugify makes: lower-case ASCII words joined by single hyphens (a safe folder name).
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")

_lock = threading.Lock()
_last_ms = 0
_last_rand = 0
_RAND_BITS = 74  # 12 bits of rand_a + 62 bits of rand_b


def new_id() -> str:
    """Return a new UUIDv7 string; ids made by one process sort in creation order."""
    global _last_ms, _last_rand
    with _lock:
        ms = time.time_ns() // 1_000_000
        if ms <= _last_ms:
            # Same millisecond (or the clock stepped back): count up so order is kept.
            ms, rand = _last_ms, _last_rand + 1
        else:
            # 73 random bits: the top bit stays clear so counting up cannot overflow.
            rand = int.from_bytes(os.urandom(10), "big") >> (80 - _RAND_BITS + 1)
        _last_ms, _last_rand = ms, rand
    rand_a = (rand >> 62) & 0xFFF
    rand_b = rand & ((1 << 62) - 1)
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rand_a << 64 | 0b10 << 62 | rand_b
    # The canonical 8-4-4-4-12 form, written out: the uuid module costs the hooks' start-up.
    digits = f"{value:032x}"
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def is_id(text: object) -> bool:
    """Whether `text` is an id in the canonical form (what arrives from elsewhere must be)."""
    return isinstance(text, str) and _ID.fullmatch(text) is not None


def is_handle(text: str) -> bool:
    """Whether `text` has the form of a record's handle, in any letter case."""
    return _HANDLE.fullmatch(text) is not None


def is_slug(text: object) -> bool:
    """Whether `text` is a project slug: lower-case ASCII words and single hyphens, at most
    64 characters; it names a folder of the mirror, so nothing else is allowed."""
    return isinstance(text, str) and len(text) <= MAX_SLUG and _SLUG.fullmatch(text) is not None
