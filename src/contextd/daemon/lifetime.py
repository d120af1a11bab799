"""When the daemon leaves on its own: after `[daemon] idle_exit` without a request (while no
MCP session is hosted), and at once when its home or its store file is deleted or replaced
(a test suite's throwaway home, a store moved aside). Checked from the accept loop by stat
alone, every few seconds."""

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["CHECK_S", "Lifetime"]

CHECK_S = 2.0  # how often the home and the store are looked at

_Identity = tuple[int, int]


def _identity(path: Path) -> _Identity | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


class Lifetime:
    """The daemon's reasons to stop by itself; `touch` on every request, `reason` on every
    tick of the accept loop."""

    def __init__(
        self,
        home: Path,
        store: Path | None,
        idle_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._home = home
        self._store = store
        self._idle_s = idle_s
        self._clock = clock
        self._home_id = _identity(home)
        self._store_id = _identity(store) if store is not None else None
        self._lock = threading.Lock()
        self._last_request = clock()
        self._last_check = clock()

    def touch(self) -> None:
        """A request arrived: the idle time starts again."""
        with self._lock:
            self._last_request = self._clock()

    def idle_s(self) -> float:
        """Seconds since the last request."""
        with self._lock:
            return self._clock() - self._last_request

    @property
    def idle_exit_s(self) -> float:
        """The idle time after which it stops; 0 for never."""
        return self._idle_s

    def reason(self, busy: bool) -> str | None:
        """Why the daemon should stop now, in words for its log; None to go on. `busy`: a
        hosted session is live, which counts as being asked."""
        now = self._clock()
        if busy:
            self.touch()
        if now - self._last_check >= CHECK_S:
            self._last_check = now
            gone = self._gone()
            if gone:
                return gone
        with self._lock:
            idle = now - self._last_request
        if self._idle_s and idle >= self._idle_s:
            return f"nothing was asked for {idle:.0f} s ([daemon] idle_exit)"
        return None

    def _gone(self) -> str | None:
        if self._home_id is None or _identity(self._home) != self._home_id:
            return f"its home {self._home} was deleted or replaced"
        if self._store is None:
            return None
        now = _identity(self._store)
        if self._store_id is None:
            self._store_id = now  # made after the daemon started
        elif now != self._store_id:
            return f"its store {self._store} was deleted or replaced"
        return None
