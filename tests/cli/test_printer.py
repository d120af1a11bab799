"""One printer for every line the CLI prints: colours only on a terminal, and nothing a stored
text carries (a title escape, a cursor move, a bidi override) ever reaches the terminal."""

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from contextd.text.printer import json_text, strip, style, terminal_text
from tests.conftest import Cli

HOSTILE = "Deploys go through staging \x1b]0;pwned\x07first\x1b[2J\r\n\u202eevil"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain text", "plain text"),
        ("title \x1b]0;pwned\x07 set", "title  set"),
        ("clear \x1b[2J screen \x1b[H", "clear  screen "),
        ("line\r\nbreak", "line\nbreak"),
        ("over\rwrite", "overwrite"),
        ("hidden \x1b[8mtext", "hidden text"),
        ("bidi \u202eoverride", "bidi override"),
        ("keep\ttabs\nand lines", "keep\ttabs\nand lines"),
        ("c1 \x9b31m", "c1 31m"),
    ],
)
def test_a_terminal_sees_no_escape_but_our_own_styles(text: str, shown: str) -> None:
    assert terminal_text(text) == shown
    styled = style("kept", fg="red", bold=True)
    assert terminal_text(styled + text) == styled + shown
    assert strip(styled) == "kept"


def test_json_keeps_the_data_and_escapes_what_would_act_on_a_terminal() -> None:
    text = json_text({"title": HOSTILE, "name": "café"})
    assert "\x1b" not in text and "\u202e" not in text and "café" in text
    assert json.loads(text)["title"] == HOSTILE


def test_a_stored_escape_never_reaches_the_terminal(run: Cli, repo: Path) -> None:
    made = run.json("add", HOSTILE, "--category", "gotcha")
    assert json.loads(json_text(made))["title"].startswith("Deploys go through staging")
    for args in (["memories"], ["show", made["id"]], ["search", "staging"]):
        out = run(*args).output
        assert "\x1b]0" not in out and "\x1b[2J" not in out and "\u202e" not in out, args
        assert "Deploys go through staging" in out


def test_colours_show_on_a_terminal_only(repo: Path, home: Path) -> None:
    env = {**os.environ, "CONTEXTD_HOME": str(home)}
    command = [sys.executable, "-m", "contextd", "status"]
    piped = subprocess.run(command, cwd=repo, env=env, capture_output=True, check=True)
    assert b"\x1b[" not in piped.stdout
    leader, follower = pty.openpty()
    done = subprocess.run(command, cwd=repo, env=env, stdout=follower, stderr=follower, check=True)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert done.returncode == 0 and b"\x1b[1m" in shown  # the bold heading
