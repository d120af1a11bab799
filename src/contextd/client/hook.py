"""`contextd hook EVENT`: read the agent's hook JSON on stdin, answer on stdout, never fail.

The standard library only: the prompt hook runs on every prompt. It hands the agent's
payload, untouched, to the daemon with a typed request (the event, the home, the project asked
for by $CONTEXTD_PROJECT, this folder, the project folders the agent names in
CLAUDE_PROJECT_DIR and the like), and the daemon answers with the bytes to print; when none
answers, the caller's in-process answer does the work (without the embedding model: full-text
recall). Any error is logged to $CONTEXTD_HOME/hook.log and the hook exits 0 with nothing on
stdout, so the agent is never blocked.
"""

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from contextd.agent_dirs import project_dirs
from contextd.home_folder import make_folders, open_private, resolve_home, unusable
from contextd.limits import MAX_HOOK_PAYLOAD
from contextd.wire import to_daemon
from contextd.wire.hook_events import EVENTS
from contextd.wire.rendezvous import Unsafe

__all__ = ["run_hook"]


_BUDGET_S = {"prompt": 4.0, "post-edit": 4.0, "post-bash": 4.0}  # others: _DEFAULT_BUDGET_S
_DEFAULT_BUDGET_S = 10.0
_GRACE_S = 0.3  # the orderly deadline comes this long before the watchdog's
_MAX_LOG = 1024 * 1024


class _OutOfTime(Exception):
    pass


def run_hook(
    argv: list[str],
    in_process: Callable[[str, bytes], str],
    describe: Callable[[BaseException], str],
    *,
    own_process: bool = False,
) -> int:
    """Run one hook; always returns 0 (fail open). Without a daemon's answer, `in_process`
    gives what to print for the event and the raw payload; `describe` words a failure for
    hook.log (never quoting the payload). `own_process`: this process is the hook's (the
    `contextd hook` program), so its budget counts from the process's start and the watchdog
    may end it; otherwise (a hook run inside another program) only the orderly deadline."""
    event = argv[0] if len(argv) == 1 else ""
    home = resolve_home()
    if event not in EVENTS:
        problem = ValueError(f"EVENT must be one of {', '.join(EVENTS)}, not {event!r}")
        sys.stderr.write(f"contextd hook: {problem}.\n")
        _log(home, event or "?", problem, 0.0, describe)
        return 0
    started = time.monotonic()
    budget = _BUDGET_S.get(event, _DEFAULT_BUDGET_S)

    def spent() -> None:
        why = _OutOfTime(f"gave up when its {budget:.0f} s budget was spent")
        _log(home, event, why, time.monotonic() - started, describe)

    watchdog = _Watchdog(budget, spent, armed=own_process)
    try:
        with watchdog:
            with _deadline(watchdog.remaining() - _GRACE_S):
                raw = sys.stdin.buffer.read(MAX_HOOK_PAYLOAD + 1)
                output = _ask_daemon(home, event, raw, describe)
                if output is None:
                    output = in_process(event, raw).encode("ascii")
            if output:
                with watchdog.printing():
                    sys.stdout.buffer.write(output)
                    sys.stdout.flush()
    except BaseException as exc:  # fail open, whatever happened (KeyboardInterrupt included)
        _log(home, event, exc, time.monotonic() - started, describe)
    return 0


def _ask_daemon(
    home: str, event: str, raw: bytes, describe: Callable[[BaseException], str]
) -> bytes | None:
    """What the daemon says to print; None when no daemon answered (or none may be trusted:
    that is logged, and the hook answers in-process, sending nothing anywhere)."""
    request = {
        "kind": "hook",
        "home": home,
        "stamp": to_daemon.code_stamp(),
        "event": event,
        "project": os.environ.get("CONTEXTD_PROJECT") or None,
        "folder": os.getcwd(),
        "project_dirs": project_dirs(os.environ),
    }
    try:
        reply = to_daemon.ask(home, request, raw, to_daemon.HOOK_TIMEOUT_S, repeatable=False)
    except Unsafe as exc:
        _log(home, event, exc, 0.0, describe)
        return None
    except to_daemon.Unanswered:
        if _on_a_server(home):
            # The daemon took the request and its team server did not answer in time: doing
            # the work again here would only double the wait the agent feels.
            raise _OutOfTime("the daemon's team server did not answer in time") from None
        return None  # a daemon still warming up, say: the local store answers here
    return reply[1] if reply is not None else None


def _on_a_server(home: str) -> bool:
    """Whether the home's config.toml puts the store on a team server."""
    import tomllib  # only when the daemon did not answer

    try:
        with open(os.path.join(home, "config.toml"), "rb") as handle:
            store = tomllib.loads(handle.read(1024 * 1024).decode("utf-8")).get("store", {})
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(store, dict) and bool(store.get("url"))


class _deadline:
    """Raise _OutOfTime in the main thread after `seconds`: the orderly way out, with the
    cause logged, whenever the main thread is in Python code or a call a signal interrupts."""

    def __init__(self, seconds: float) -> None:
        self.seconds = max(0.001, seconds)

    def __enter__(self) -> None:
        def expire(_signum: int, _frame: object) -> None:
            raise _OutOfTime(f"gave up after {self.seconds:.1f} s")

        signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *_exc: object) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)


class _Watchdog:
    """Ends the process, having printed nothing, once the hook's budget is spent: counted from
    the process's start (the agent waits for the interpreter too), and kept by a thread, so
    no call the main thread is blocked in (a C library's own wait loop, a lock) can hold the
    agent past it. `on_expiry` logs why, first."""

    def __init__(self, seconds: float, on_expiry: Callable[[], None], *, armed: bool) -> None:
        self._ends = time.monotonic() + seconds - (_age() if armed else 0.0)
        self._on_expiry = on_expiry
        self._armed = armed  # unarmed, it only counts the budget for the orderly deadline
        self._printing = threading.Lock()
        self._timer = threading.Timer(max(0.0, self.remaining()), self._expire)
        self._timer.daemon = True

    def remaining(self) -> float:
        return self._ends - time.monotonic()

    def __enter__(self) -> None:
        if self._armed:
            self._timer.start()

    def __exit__(self, *_exc: object) -> None:
        self._timer.cancel()

    @contextmanager
    def printing(self) -> Iterator[None]:
        """Printing the answer, which the watchdog lets finish: an answer is printed whole or
        not at all. Once the watchdog has begun to end the process, this waits for the end."""
        if not self._printing.acquire(blocking=False):
            time.sleep(60)  # the watchdog is ending the process
        yield

    def _expire(self) -> None:
        if not self._printing.acquire(blocking=False):
            return  # the answer is being printed: let it finish
        try:
            self._on_expiry()
        finally:
            os._exit(0)


def _age() -> float:
    """Seconds since this process started (0 where /proc cannot say)."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            started = int(stat.read().rsplit(b")", 1)[1].split()[19])  # field 22: starttime
        with open("/proc/uptime", "rb") as uptime:
            now = float(uptime.read().split()[0])
        return max(0.0, now - started / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


def _log(
    home: str,
    event: str,
    exc: BaseException,
    elapsed: float,
    describe: Callable[[BaseException], str],
) -> None:
    import traceback  # only on failure: kept off the start-up path

    if unusable(home):
        return  # another user's home: nothing of ours is written there
    try:
        make_folders(home)
        path = os.path.join(home, "hook.log")
        if os.path.exists(path) and os.path.getsize(path) > _MAX_LOG:
            os.replace(path, path + ".1")
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        detail = describe(exc)  # never the payload's text
        handle = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        with open(handle, "a", encoding="utf-8", errors="backslashreplace") as log:
            log.write(f"{stamp} hook {event} failed after {elapsed:.2f} s: {detail}\n")
            if os.environ.get("CONTEXTD_DEBUG"):
                log.write("".join(traceback.format_tb(exc.__traceback__)))
    except OSError:
        pass  # nowhere to write: still fail open
