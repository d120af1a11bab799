"""Bad input at the edges gets one sentence and the documented exit code, never a traceback
(exit 70): bytes that are not UTF-8 in the arguments, a date span beyond the calendar."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli


def _contextd(*argv: bytes, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "contextd", *argv],
        capture_output=True,
        cwd=cwd,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    "argv",
    [
        (b"add", b"Builds need Node \xff\xfe on every runner", b"--category", b"gotcha"),
        (b"search", b"queue \xc3"),
        (b"--project", b"orb\xe9t", b"status"),
        (b"learn", b"\xed\xa0\x80 query", b"01234567"),
    ],
    ids=["add", "search", "option", "encoded surrogate"],
)
def test_arguments_that_are_not_utf8_are_refused_in_one_sentence(
    repo: Path, run: Cli, argv: tuple[bytes, ...]
) -> None:
    done = _contextd(*argv, cwd=repo)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(b"Error: Argument ") and b"not valid UTF-8" in done.stderr
    assert done.stderr.count(b"\n") == 1 and b"Traceback" not in done.stderr
    assert run.json("memories")["records"] == []


def test_a_json_caller_gets_the_error_as_json_too(repo: Path) -> None:
    done = _contextd(b"search", b"queue \xff", b"--json", cwd=repo)
    assert done.returncode == 2 and b'"type": "InvalidInputError"' in done.stdout


@pytest.mark.usefixtures("repo")
@pytest.mark.parametrize(
    "args",
    [
        ["search", "queue", "--since", "99999999d"],
        ["recall", "queue", "--before", "99999999999999w"],
        ["bundle", "export", "--out", "-", "--since", "99999999d"],
    ],
)
def test_a_span_reaching_before_the_year_one_is_refused(run: Cli, args: list[str]) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert "reaches back before the year 1" in result.stderr
