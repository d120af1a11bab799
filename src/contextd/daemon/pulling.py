"""The daemon's scheduled pull: a thread of its own pulls the configured remotes every
`[sync] pull_every` (contextd.sync.schedule), so no hook or request ever waits for a remote."""

import logging
import threading

from contextd.app import App

__all__ = ["ScheduledPull"]

log = logging.getLogger(__name__)

_TICK_S = 5.0  # how often the thread looks whether a remote is due


class ScheduledPull:
    """Pulls due remotes until the daemon stops; the first look is at once (a remote
    tried within the interval before, by an earlier daemon, waits for its turn)."""

    def __init__(self, app: App, stopping: threading.Event, every_s: int) -> None:
        self._app = app
        self._stopping = stopping
        self._every_s = every_s
        self._thread = threading.Thread(target=self._run, name="contextd-pull", daemon=True)

    def start(self) -> None:
        log.info("pulling the configured remotes every %d s", self._every_s)
        self._thread.start()

    def _run(self) -> None:
        from contextd.sync.schedule import PullResult, pull_due

        home = self._app.settings.home
        tried: dict[str, PullResult] = {}
        while not self._stopping.is_set():
            try:
                pull_due(self._app.remotes, home, self._every_s, tried)
            except Exception:  # the store or the home failed: the next tick tries again
                log.warning("the scheduled pull failed", exc_info=True)
            self._stopping.wait(min(_TICK_S, self._every_s))
