"""A client's `contextd search|recall`, run inside the daemon (see contextd.daemon.forward).

The very same click command runs against the daemon's warm App as if it ran in the client's
process: with its argv, working folder and environment, its streams' encodings, its colour
choice and terminal width. What it prints is recorded write by write, so stdout and stderr
keep their order. The daemon serves one request at a time, so borrowing the process's
working folder, environment and streams for the length of a command is safe.
"""

import io
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from msgspec.structs import replace

from contextd.app import App
from contextd.cli._context import CliState
from contextd.cli.main import cli
from contextd.config import Settings
from contextd.daemon.forward import FORWARDED, Command, command_of
from contextd.errors import DaemonError

__all__ = ["answer"]

Tape = list[tuple[int, bytes]]


class _Declined(BaseException):
    """Raised through click (whose commands turn every Exception into a message) when the
    client's command resolves to settings this daemon was not started with."""


def answer(app: App, stamp: str, command: Command) -> bytes:
    """The exit code and the recorded writes, for the daemon's raw reply (see
    contextd.daemon.forward.parse_answer).

    Raises:
        DaemonError: this daemon must not answer (other code, another home, changed settings,
            a command that is not read-only); the client then runs the command itself.
    """
    if command.stamp != stamp:
        raise DaemonError(
            "This daemon runs other contextd code than its client; restart it "
            "(`contextd daemon stop`, then `contextd daemon start`)."
        )
    if command_of(command.argv)[0] not in FORWARDED:
        raise DaemonError(f"The daemon runs only {' and '.join(sorted(FORWARDED))} for a client.")
    tape: Tape = []
    try:
        with _as_client(command.cwd, command.env), _recording(tape, command.streams):
            code = _run(command.argv, _lender(app), command.color)
    except _Declined as exc:
        raise DaemonError(str(exc)) from None
    frames = [b"%d\n" % code, *(b"%d %d\n%s" % (fd, len(data), data) for fd, data in tape)]
    return b"".join(frames)


def _run(argv: list[str], lend: Callable[[Settings], App], color: bool) -> int:
    try:
        cli.main(args=argv, prog_name="contextd", color=color, obj=CliState(lend=lend))
    except SystemExit as exc:  # click's standalone mode always ends this way
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    return 0


def _lender(app: App) -> Callable[[Settings], App]:
    """The daemon's App acting for the client's settings, when only its folder and project
    differ from the daemon's own."""

    def lend(settings: Settings) -> App:
        own = app.settings
        if settings.home != own.home:
            raise _Declined(f"This daemon serves {own.home}, not {settings.home}.")
        if replace(settings, cwd=own.cwd, project=own.project) != own:
            raise _Declined(f"{settings.config_path} changed since this daemon started.")
        return app.acting_for(settings)

    return lend


@contextmanager
def _as_client(cwd: str, env: Mapping[str, str]) -> Iterator[None]:
    own_env = dict(os.environ)
    own_cwd = os.open(".", os.O_RDONLY)  # by descriptor: it may have been removed since
    try:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update({str(name): str(value) for name, value in env.items()})
        yield
    finally:
        os.environ.clear()
        os.environ.update(own_env)
        os.fchdir(own_cwd)
        os.close(own_cwd)


class _TapeWriter(io.BufferedIOBase):
    """One stream's bytes, appended to the shared tape as they are written."""

    def __init__(self, tape: Tape, fd: int) -> None:
        super().__init__()
        self._tape, self._fd = tape, fd

    @property
    def name(self) -> str:
        return "<stdout>" if self._fd == 1 else "<stderr>"

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        if self._tape and self._tape[-1][0] == self._fd:
            self._tape[-1] = (self._fd, self._tape[-1][1] + chunk)
        else:
            self._tape.append((self._fd, chunk))
        return len(chunk)


@contextmanager
def _recording(tape: Tape, streams: tuple[tuple[str, str], tuple[str, str]]) -> Iterator[None]:
    """sys.stdout and sys.stderr as the client's (encoding, errors), recorded on `tape`."""
    (out_encoding, out_errors), (err_encoding, err_errors) = streams
    out = io.TextIOWrapper(
        _TapeWriter(tape, 1), encoding=out_encoding, errors=out_errors, write_through=True
    )
    err = io.TextIOWrapper(
        _TapeWriter(tape, 2), encoding=err_encoding, errors=err_errors, write_through=True
    )
    saved = sys.stdout, sys.stderr, sys.__stdout__
    sys.stdout, sys.stderr = out, err
    # shutil measures the terminal through sys.__stdout__: the daemon's own must not be
    # measured (the client put its width in $COLUMNS when it has one).
    setattr(sys, "__stdout__", out)  # noqa: B010
    try:
        yield
    finally:
        out.flush()
        err.flush()
        sys.stdout, sys.stderr = saved[0], saved[1]
        setattr(sys, "__stdout__", saved[2])  # noqa: B010
