"""The scheduled pull (`[sync] pull_every`): which configured remotes are due, pulling them
one by one, and what each last try gave, kept in `<home>/pulls.json` for `status`.

A remote that fails is skipped until the next interval; a try counts whatever its outcome,
so a machine that is away is asked once an interval, not on every tick. What is kept names
counts and the error's sentence, never a record's text.
"""

import logging
import os
from datetime import timedelta
from pathlib import Path

import msgspec
from msgspec import Struct

from contextd.clock import now, parse_instant, to_iso
from contextd.credentials.scan import find_secrets
from contextd.errors import ContextdError
from contextd.home_folder import open_private
from contextd.sync.remotes import RemoteService

__all__ = ["RESULTS_FILE", "PullResult", "due", "next_due", "pull_due", "read_results"]

log = logging.getLogger(__name__)

RESULTS_FILE = "pulls.json"
_MAX_FILE = 1024 * 1024
_COUNTS = ("added", "updated", "deleted", "conflicts")


class PullResult(Struct, frozen=True):
    """One remote's last scheduled pull: when it was tried and what it gave."""

    remote: str
    at: str
    ok: bool
    counts: dict[str, int] = msgspec.field(default_factory=dict)
    error: str = ""

    def summary(self) -> str:
        """The outcome in a few words: counts, or why it failed."""
        if not self.ok:
            return f"failed: {self.error}"
        changed = [f"{self.counts.get(k, 0)} {k}" for k in _COUNTS if self.counts.get(k)]
        return ", ".join(changed) if changed else "nothing new"


def read_results(home: Path) -> dict[str, PullResult]:
    """Each remote's last scheduled pull; empty when none ran (or the file is unreadable)."""
    try:
        with open(home / RESULTS_FILE, "rb") as handle:
            raw = handle.read(_MAX_FILE + 1)
        listed = msgspec.json.decode(raw, type=list[PullResult])
    except (OSError, msgspec.DecodeError):
        return {}
    return {r.remote: r for r in listed}


def due(names: list[str], results: dict[str, PullResult], every_s: int, at: str) -> list[str]:
    """The remotes whose last try is `every_s` or more before `at` (or that were never tried)."""
    moment = parse_instant(at)
    wanted = []
    for name in names:
        last = results.get(name)
        if last is None or parse_instant(last.at) + timedelta(seconds=every_s) <= moment:
            wanted.append(name)
    return wanted


def pull_due(
    remotes: RemoteService, home: Path, every_s: int, tried: dict[str, PullResult]
) -> list[PullResult]:
    """Pull every configured remote that is due, in batch mode (nothing waits on a prompt),
    each within the remote timeout; record and log each outcome. A remote that fails does
    not stop the others. `tried` holds the caller's own tries (kept up to date here), so a
    results file that cannot be written never makes a remote due again at once."""
    results = read_results(home)
    for name, result in tried.items():
        if name not in results or results[name].at < result.at:
            results[name] = result
    configured = [r.name for r in remotes.list()]
    results = {name: r for name, r in results.items() if name in configured}
    done = []
    for name in due(configured, results, every_s, now()):
        result = _pull(remotes, name)
        results[name] = tried[name] = result
        done.append(result)
        try:
            _write(home, list(results.values()))
        except OSError as exc:
            log.warning("cannot record the scheduled pull in %s: %s", home, exc.strerror)
    return done


def _pull(remotes: RemoteService, name: str) -> PullResult:
    started = now()
    try:
        report = remotes.pull(name, dry_run=False, batch=True)
    except ContextdError as exc:
        error = _quotable(str(exc))
        log.warning("scheduled pull from %s failed (tried again next interval): %s", name, error)
        return PullResult(name, started, False, error=error)
    except Exception as exc:  # one remote's surprise must not end the schedule
        error = f"{type(exc).__name__} (see the daemon log)"
        log.warning("scheduled pull from %s failed: %s", name, error, exc_info=True)
        return PullResult(name, started, False, error=error)
    view = report.view("")
    counts = {k: int(str(view[k])) for k in _COUNTS}
    result = PullResult(name, started, True, counts)
    log.info("scheduled pull from %s merged: %s", name, result.summary())
    return result


def _quotable(text: str) -> str:
    """An error's sentence, on one line, unless it holds what looks like a secret."""
    flat = " ".join(text.split())[:500]
    if find_secrets(flat):
        return "the remote's error message is withheld: it looked like it held a secret"
    return flat


def _write(home: Path, results: list[PullResult]) -> None:
    path = home / RESULTS_FILE
    scratch = path.with_name(f"{RESULTS_FILE}.{os.getpid()}")
    handle = open_private(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        try:
            os.write(handle, msgspec.json.encode(sorted(results, key=lambda r: r.remote)))
        finally:
            os.close(handle)
        os.replace(scratch, path)
    except OSError:
        scratch.unlink(missing_ok=True)
        raise


def next_due(result: PullResult | None, every_s: int) -> str | None:
    """When the remote is pulled next (None: at the daemon's next look)."""
    if result is None:
        return None
    return to_iso(parse_instant(result.at) + timedelta(seconds=every_s))
