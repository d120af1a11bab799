"""Running a process (ssh) with what it prints capped and the whole run timed: its stdin is
fed, its stdout kept up to a cap, the tail of its stderr kept, and it is killed once it prints
more than the cap or outlives the time allowed."""

import os
import selectors
import subprocess
import time
from typing import IO, NamedTuple

__all__ = ["Finished", "TooLong", "TooMuch", "run_bounded"]

_CHUNK = 64 * 1024
_STDERR_KEPT = 64 * 1024  # the end of what it said: where ssh and contextd put their errors


class Finished(NamedTuple):
    returncode: int
    stdout: bytes
    stderr: bytes


class TooMuch(Exception):
    """It printed more than the cap allows on stdout (it was killed)."""


class TooLong(Exception):
    """It did not finish within the time allowed (it was killed)."""


def run_bounded(argv: list[str], stdin: bytes, *, out_cap: int, seconds: float) -> Finished:
    """Run `argv` to its end, feeding it `stdin`.

    Raises:
        FileNotFoundError: the program is not installed.
        TooMuch: it printed more than `out_cap` bytes on stdout.
        TooLong: it was still running after `seconds`.
    """
    deadline = time.monotonic() + seconds
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        out, err = _pump(process, stdin, out_cap, deadline)
        process.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise TooLong() from None
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    return Finished(process.returncode, out, err)


def _pump(
    process: "subprocess.Popen[bytes]", stdin: bytes, out_cap: int, deadline: float
) -> tuple[bytes, bytes]:
    """Feed stdin and read both outputs until both end."""
    assert process.stdin and process.stdout and process.stderr
    out, err = bytearray(), bytearray()
    fed = 0
    with selectors.DefaultSelector() as selector:
        for stream in (process.stdout, process.stderr):
            os.set_blocking(stream.fileno(), False)
            selector.register(stream, selectors.EVENT_READ)
        if stdin:
            os.set_blocking(process.stdin.fileno(), False)
            selector.register(process.stdin, selectors.EVENT_WRITE)
        else:
            process.stdin.close()
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise TooLong()
            for key, _events in selector.select(left):
                source = key.fileobj
                if source is process.stdin:
                    fed = _feed(selector, process.stdin, stdin, fed)
                    continue
                chunk = os.read(key.fd, _CHUNK)
                if not chunk:
                    selector.unregister(source)
                elif source is process.stdout:
                    out += chunk
                    if len(out) > out_cap:
                        raise TooMuch()
                else:
                    err += chunk
                    del err[:-_STDERR_KEPT]
    return bytes(out), bytes(err)


def _feed(selector: selectors.BaseSelector, pipe: IO[bytes], data: bytes, fed: int) -> int:
    """Write what the pipe takes now; closed once all is written or the reader is gone."""
    try:
        fed += os.write(pipe.fileno(), data[fed : fed + _CHUNK])
    except BlockingIOError:
        return fed
    except (BrokenPipeError, ConnectionResetError):
        fed = len(data)  # it stopped reading (it refused the input): its answer says why
    if fed >= len(data):
        selector.unregister(pipe)
        pipe.close()
    return fed
