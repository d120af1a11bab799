"""Starting the daemon as a detached process of its own (for `daemon start` and the hooks)."""

import fcntl
import os
import subprocess
import sys
from pathlib import Path

from contextd.home_folder import open_private
from contextd.threads import daemon_environment

__all__ = [
    "EXTRACT_LOG", "LOCK_FILE", "LOG_FILE", "running", "start_detached", "start_extraction",
    "start_quietly",
]  # fmt: skip

LOCK_FILE = "daemon.lock"  # a running daemon holds it, from its start to its end
LOG_FILE = "daemon.log"
EXTRACT_LOG = "extract.log"  # what a detached extraction printed (nothing, when all is well)
_MAX_LOG = 1024 * 1024


def start_detached(home: Path) -> "subprocess.Popen[bytes]":
    """Run `contextd daemon run` for `home` in a new session, logging to <home>/daemon.log;
    it exits at once when another daemon already serves that home.

    Raises:
        OSError: the log cannot be opened (a read-only home, say).
    """
    env = daemon_environment(dict(os.environ))
    log_path = home / LOG_FILE
    if log_path.exists() and log_path.stat().st_size > _MAX_LOG:
        os.replace(log_path, log_path.with_name(LOG_FILE + ".1"))
    log = open_private(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "contextd", "--home", str(home), "daemon", "run"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(log)


def running(home: Path) -> bool:
    """Whether a daemon holds the home's lock (answering, or still warming up)."""
    try:
        handle = os.open(home / LOCK_FILE, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(handle)  # which lets go of a lock taken here
    return False


def start_quietly(home: Path) -> bool:
    """`start_detached` unless a daemon runs, for a process that only wants one around (to
    fill vectors, to answer the next prompt warm); True when it started one. A home that
    cannot hold its log means no daemon."""
    if running(home):
        return False
    try:
        start_detached(home)
    except OSError:
        return False
    return True


def start_extraction(home: Path, project_id: str, session_key: str, transcript: Path) -> bool:
    """Run `contextd capture-extract` for one session's transcript in a new session of its
    own, not waited for: a hook hands the work over and returns. False when it could not
    start (the next hook tries again)."""
    try:
        log = open_private(home / EXTRACT_LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    except OSError:
        return False
    command = [
        sys.executable, "-m", "contextd", "--home", str(home), "capture-extract",
        "--project-id", project_id, "--session", session_key, "--transcript", str(transcript),
    ]  # fmt: skip
    try:
        subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        return False
    finally:
        os.close(log)
    return True
