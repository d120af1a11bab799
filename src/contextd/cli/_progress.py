"""Progress of work that takes a while (downloading, embedding, checking): a bar on stderr,
only on a terminal and not under --json, so a pipe, a log or a script never carries one."""

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from contextd.cli._context import state
from contextd.text.printer import colour_on

__all__ = ["Bar", "progress_bar"]


class Bar:
    """A bar drawn from the first report of `total` at least `at_least` steps; `update`
    takes the steps done so far."""

    def __init__(self, label: str, *, at_least: int = 1, percent: bool = False) -> None:
        self._label, self._at_least, self._percent = label, at_least, percent
        self._bar: Any = None
        self._on = _terminal() and not _json()

    def update(self, done: int, total: int) -> None:
        if not self._on or total < self._at_least:
            return
        if self._bar is None:
            self._bar = click.progressbar(
                length=total,
                label=self._label,
                file=sys.stderr,
                show_pos=not self._percent,
                show_percent=self._percent,
                color=colour_on(sys.stderr),
            )
            self._bar.__enter__()
        self._bar.update(done - self._bar.pos)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


@contextmanager
def progress_bar(label: str, *, at_least: int = 1, percent: bool = False) -> Iterator[Bar]:
    bar = Bar(label, at_least=at_least, percent=percent)
    try:
        yield bar
    finally:
        bar.close()


def _json() -> bool:
    """Under --json a person asked for data, not decoration."""
    ctx = click.get_current_context(silent=True)
    return ctx is not None and state(ctx).json


def _terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False
