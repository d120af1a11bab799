"""Progress of work that takes a while (embedding, checking, merging): a bar on stderr, and
only on a terminal, so a pipe, a log or --json output never carries one."""

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from contextd.client.printer import colour_on

__all__ = ["Bar", "progress_bar"]


class Bar:
    """A bar drawn from the first report of `total` at least `at_least` steps; `update`
    takes the steps done so far."""

    def __init__(self, label: str, *, at_least: int = 1) -> None:
        self._label, self._at_least = label, at_least
        self._bar: Any = None
        self._on = _terminal()

    def update(self, done: int, total: int) -> None:
        if not self._on or total < self._at_least:
            return
        if self._bar is None:
            self._bar = click.progressbar(
                length=total,
                label=self._label,
                file=sys.stderr,
                show_pos=True,
                color=colour_on(sys.stderr),
            )
            self._bar.__enter__()
        self._bar.update(done - self._bar.pos)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


@contextmanager
def progress_bar(label: str, *, at_least: int = 1) -> Iterator[Bar]:
    bar = Bar(label, at_least=at_least)
    try:
        yield bar
    finally:
        bar.close()


def _terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False
