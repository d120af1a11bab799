"""Output on a console that is not UTF-8 (a Windows console's cp1252, latin-1): contextd
degrades what the encoding cannot carry instead of failing, and JSON keeps every character."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli

TITLE = "Deploy checks pass ✓ before the 🚀 release in café hours"


def _contextd(
    repo: Path, home: Path, encoding: str, *args: str
) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "CONTEXTD_HOME": str(home), "PYTHONIOENCODING": encoding}
    return subprocess.run(
        [sys.executable, "-m", "contextd", *args], cwd=repo, env=env, capture_output=True
    )


@pytest.mark.parametrize("encoding", ["cp1252", "latin-1"])
def test_status_and_lists_print_on_a_console_that_is_not_utf8(
    run: Cli, repo: Path, home: Path, encoding: str
) -> None:
    run.json("add", TITLE, "--category", "gotcha")
    for args in (["status"], ["memories"], ["search", "deploy checks"]):
        done = _contextd(repo, home, encoding, *args)
        assert done.returncode == 0, (args, done.stderr)
        shown = done.stdout.decode(encoding)
        assert "Traceback" not in done.stderr.decode(encoding, "replace")
        if args == ["status"]:
            assert "Semantic     ok " in shown and "-" * 33 in shown
        else:
            assert "Deploy checks pass ok before the ? release in café hours" in shown, shown


def test_json_on_a_cp1252_console_keeps_every_character(run: Cli, repo: Path, home: Path) -> None:
    run.json("add", TITLE, "--category", "gotcha")
    done = _contextd(repo, home, "cp1252", "memories", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.decode("cp1252"))["records"][0]["title"] == TITLE


@pytest.mark.parametrize(("name", "value"), [("PYTHONIOENCODING", "ascii"), ("LC_ALL", "C")])
def test_an_ascii_or_c_locale_console_prints_too(
    run: Cli, repo: Path, home: Path, name: str, value: str
) -> None:
    run.json("add", TITLE, "--category", "gotcha")
    env = {**os.environ, "CONTEXTD_HOME": str(home), name: value}
    env.pop("PYTHONIOENCODING" if name == "LC_ALL" else "LC_ALL", None)
    for args in (["status"], ["memories"]):
        done = subprocess.run(
            [sys.executable, "-m", "contextd", *args], cwd=repo, env=env, capture_output=True
        )
        assert done.returncode == 0, (args, done.stderr)
        assert b"Traceback" not in done.stderr
        assert "Deploy checks pass" in done.stdout.decode("utf-8") or args == ["status"]


def test_an_error_naming_what_the_console_cannot_show_is_still_one_sentence(
    repo: Path, home: Path
) -> None:
    done = _contextd(repo, home, "cp1252", "show", "✓nope")
    assert done.returncode != 0 and done.returncode != 70, done.stderr
    message = done.stderr.decode("cp1252")
    assert message.startswith("Error: ") and "Traceback" not in message
