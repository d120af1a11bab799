"""Long listings on a terminal go through a pager ($PAGER, else less), as git's do; off a
terminal, or when they fit the screen, they are printed as they are."""

import io
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["paged"]


class _Screen(io.TextIOWrapper):
    """What the listing would have shown on the terminal, held back: it answers as the
    terminal does, so colours and the terminal's encoding stay as they would be."""

    def __init__(self, terminal: TextIO) -> None:
        super().__init__(io.BytesIO(), encoding=terminal.encoding or "utf-8", errors="replace")

    def isatty(self) -> bool:
        return True

    def getvalue(self) -> str:
        self.flush()
        held = self.buffer
        assert isinstance(held, io.BytesIO)
        return held.getvalue().decode(self.encoding, "replace")


def paged(show: Callable[[], None]) -> None:
    """Run `show`; on a terminal, what it printed goes through the pager when it is taller
    than the screen."""
    terminal = sys.stdout
    if not _isatty(terminal) or os.environ.get("PAGER") == "":
        show()
        return
    with _held(terminal) as screen:
        show()
    text = screen.getvalue()
    rows = shutil.get_terminal_size().lines
    if text.count("\n") < rows - 1:
        terminal.write(text)
        terminal.flush()
        return
    _through_pager(text, terminal)


def _through_pager(text: str, terminal: TextIO) -> None:
    """`text` into $PAGER (else less -FRX: colours kept, quits when it fits, the screen
    left as it was); printed as it is when no pager can be started."""
    command = shlex.split(os.environ.get("PAGER") or "less")
    env = os.environ | {"LESS": os.environ.get("LESS", "FRX")}
    data = text.encode(terminal.encoding or "utf-8", "replace")
    try:
        pager = subprocess.Popen(command, stdin=subprocess.PIPE, env=env)
    except OSError:
        terminal.write(text)
        terminal.flush()
        return
    assert pager.stdin is not None
    try:
        pager.stdin.write(data)
        pager.stdin.close()
    except BrokenPipeError:  # the reader quit the pager early (q)
        pass
    while True:
        try:
            pager.wait()
            return
        except KeyboardInterrupt:  # Ctrl-C belongs to the pager while it shows the listing
            continue


@contextmanager
def _held(terminal: TextIO) -> Iterator[_Screen]:
    screen = _Screen(terminal)
    sys.stdout = screen
    try:
        yield screen
    finally:
        sys.stdout = terminal


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False
