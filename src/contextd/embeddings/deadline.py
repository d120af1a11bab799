"""A time limit for a whole network task (every page and file it fetches), so a server that
answers slowly, or never stops answering, cannot hold `model install` for ever."""

import time
from typing import Any

__all__ = ["Deadline", "DeadlinePassed"]

_READ_S = 30.0  # the longest wait for one piece of an answer
_CONNECT_S = 10.0


class DeadlinePassed(Exception):
    """The task's time ran out."""


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def left(self) -> float:
        return self._end - time.monotonic()

    def check(self) -> None:
        if self.left() <= 0:
            raise DeadlinePassed

    def timeout(self) -> Any:
        """An httpx timeout for the next request: no wait outlasts what is left."""
        import httpx

        left = max(self.left(), 0.05)
        return httpx.Timeout(min(_READ_S, left), connect=min(_CONNECT_S, left))
