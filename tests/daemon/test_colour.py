"""NO_COLOR and --color on a terminal, answered by a running daemon's fast client: the same
as in process (tests/cli/test_habits.py)."""

from pathlib import Path

from tests.cli.test_habits import WANTED, colours
from tests.conftest import DECISION, Cli
from tests.daemon._support import Daemons


def test_no_color_and_the_color_flag_on_the_daemons_fast_path(
    daemons: Daemons, repo: Path, run: Cli
) -> None:
    assert run(*DECISION).exit_code == 0
    daemons.start()
    assert colours(repo, warm=True) == WANTED
