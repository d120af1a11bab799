"""Time-ordered record ids (UUID version 7), unique across machines without coordination."""

import os
import threading
import time

__all__ = ["MIN_PREFIX", "new_id"]

MIN_PREFIX = 8

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
