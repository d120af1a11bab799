"""The habits a command line is expected to have: NO_COLOR and --color on both paths (the
daemon's fast client and click's), "did you mean" for a mistyped command, completion
scripts, a pager and --limit for long listings, progress on a terminal only, examples in
--help, counts in the right number."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.terminal import on_terminal
from tests.conftest import DECISION, Cli

# The same on the daemon's fast path: tests/daemon/test_colour.py

CYAN = "\x1b[36m"  # a decision's kind, in colour


def _contextd(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "contextd", *args],
        cwd=cwd,
        env=os.environ | (env or {}),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )


def colours(repo: Path, *, warm: bool) -> dict[str, bool]:
    """Whether `search` shows colour on a terminal, each way colour is chosen."""
    ways = {
        "default": ({}, ()),
        "NO_COLOR": ({"NO_COLOR": "1"}, ()),
        "--color never": ({}, ("--color", "never")),
        "NO_COLOR and --color always": ({"NO_COLOR": "1"}, ("--color", "always")),
        "--color=never before the command": ({}, ()),
    }
    shown: dict[str, bool] = {}
    for way, (env, flags) in ways.items():
        args = (
            ("--color=never", "search", "task queue")
            if "before" in way
            else ("search", "task queue", *flags)
        )
        ran = on_terminal(repo, *args, env=env)
        assert ran.code == 0, ran.screen
        assert ran.warm is warm, way
        assert "Use NATS for the task queue" in ran.screen
        shown[way] = CYAN in ran.screen
    return shown


WANTED = {
    "default": True,
    "NO_COLOR": False,
    "--color never": False,
    "NO_COLOR and --color always": True,
    "--color=never before the command": False,
}


def test_no_color_and_the_color_flag_in_process(repo: Path, run: Cli) -> None:
    assert run(*DECISION).exit_code == 0
    assert colours(repo, warm=False) == WANTED


def test_color_always_colours_a_pipe_and_never_is_the_default_there(repo: Path, run: Cli) -> None:
    assert run(*DECISION).exit_code == 0
    assert CYAN in _contextd(repo, "memories", "--color", "always").stdout
    assert "\x1b[" not in _contextd(repo, "memories").stdout
    assert run("memories", "--color", "rainbow").exit_code == 2


def test_a_mistyped_command_gets_what_it_was_meant_to_be(repo: Path, run: Cli) -> None:
    done = _contextd(repo, "serch", "task queue")
    assert done.returncode == 2
    assert "No such command 'serch'. Did you mean 'search'" in done.stderr
    inner = run("session", "lst")
    assert inner.exit_code == 2 and "Did you mean 'list'?" in inner.stderr
    nothing_close = run("zzzzzz")
    assert nothing_close.exit_code == 2
    assert "No such command 'zzzzzz'." in nothing_close.stderr
    assert "Did you mean" not in nothing_close.stderr


@pytest.mark.parametrize(
    ("shell", "marker"),
    [("bash", "complete -o nosort -F"), ("zsh", "#compdef contextd"), ("fish", "complete")],
)
def test_completion_prints_the_shells_script(repo: Path, shell: str, marker: str) -> None:
    done = _contextd(repo, "completion", shell)
    assert done.returncode == 0, done.stderr
    assert marker in done.stdout and "_CONTEXTD_COMPLETE" in done.stdout


def test_the_bash_script_completes_commands_in_a_real_bash(repo: Path, tmp_path: Path) -> None:
    script = tmp_path / "complete.bash"
    script.write_text(_contextd(repo, "completion", "bash").stdout, encoding="utf-8")
    launcher = tmp_path / "bin"
    launcher.mkdir()
    (launcher / "contextd").write_text(
        f'#!/bin/sh\nexec {sys.executable} -m contextd "$@"\n', encoding="utf-8"
    )
    (launcher / "contextd").chmod(0o700)
    line = (
        f"source {script}; COMP_WORDS=(contextd ses); COMP_CWORD=1; "
        '_contextd_completion contextd; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    done = subprocess.run(
        ["bash", "-c", line],
        cwd=repo,
        env=os.environ | {"PATH": f"{launcher}{os.pathsep}{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert done.stdout.split() == ["session"], done.stderr


def _many(run: Cli, count: int) -> None:
    for n in range(count):
        text = f"Deploy note {n}: the release train for region {n} leaves at {n % 24}:00 UTC"
        assert run("add", text, "--category", "convention", "--force").exit_code == 0


@pytest.fixture
def pager(tmp_path: Path) -> dict[str, str]:
    script = tmp_path / "pager"
    script.write_text("#!/bin/sh\necho PAGED-BY-THE-PAGER\ncat\n", encoding="utf-8")
    script.chmod(0o700)
    return {"PAGER": str(script)}


def test_a_long_listing_on_a_terminal_goes_through_the_pager(
    repo: Path, run: Cli, pager: dict[str, str]
) -> None:
    _many(run, 30)
    for command in ("memories", "stale --days 0"):
        ran = on_terminal(repo, *command.split(), env=pager, rows=12)
        assert ran.code == 0, ran.screen
        assert ran.screen.startswith("PAGED-BY-THE-PAGER"), command
        assert "Deploy note 29" in ran.screen and "Deploy note 0:" in ran.screen
    short = on_terminal(repo, "memories", "--limit", "5", env=pager, rows=12)
    assert "PAGED-BY-THE-PAGER" not in short.screen
    assert short.screen.count("Deploy note") == 5
    assert "25 more not shown; raise --limit to see them." in short.screen
    tall = on_terminal(repo, "memories", env=pager, rows=60)
    assert "PAGED-BY-THE-PAGER" not in tall.screen  # it fits the screen


def test_off_a_terminal_no_pager_and_limit_cuts_the_json_too(
    repo: Path, run: Cli, pager: dict[str, str]
) -> None:
    _many(run, 8)
    piped = _contextd(repo, "memories", env=pager)
    assert "PAGED-BY-THE-PAGER" not in piped.stdout
    assert piped.stdout.count("Deploy note") == 8
    listed = json.loads(_contextd(repo, "memories", "--limit", "3", "--json").stdout)
    assert len(listed["records"]) == 3
    assert len(run.json("quality", "--limit", "2")["issues"]) <= 2
    assert run("memories", "--limit", "0").exit_code == 2


def test_bundle_import_shows_progress_on_a_terminal_only(
    repo: Path, run: Cli, tmp_path: Path
) -> None:
    _many(run, 60)
    bundle = tmp_path / "bundle.json"
    assert run("bundle", "export", "--out", str(bundle)).exit_code == 0
    desks = []
    for name in ("desk", "piped-desk"):
        desk = tmp_path / name
        desk.mkdir(mode=0o700)
        (desk / "config.toml").write_text('[embeddings]\nprovider = "hashing"\n', encoding="utf-8")
        desks.append(desk)
    shown = on_terminal(repo, "bundle", "import", "--file", str(bundle), "--home", str(desks[0]))
    assert shown.code == 0, shown.screen
    assert "embedding" in shown.screen and "60/60" in shown.screen
    piped = _contextd(repo, "bundle", "import", "--file", str(bundle), "--home", str(desks[1]))
    assert piped.returncode == 0, piped.stderr
    assert "embedding" not in piped.stderr and "60/60" not in piped.stderr


@pytest.mark.parametrize(
    "command",
    [
        "search",
        "recall",
        "add",
        "decide",
        "constrain",
        "pipeline",
        "checkpoint",
        "memories",
        "show",
        "quality",
        "config",
        "init",
        "attach",
        "setup",
        "status",
        "ui",
        "completion",
        "bundle export",
        "bundle import",
    ],
)
def test_the_main_commands_help_has_examples(run: Cli, command: str) -> None:
    result = run(*command.split(), "--help")
    assert result.exit_code == 0
    examples = result.stdout.split("Examples:\n", 1)[1].split("\n\n", 1)[0]
    assert f"contextd {command}" in examples


def test_the_hot_commands_examples_run(repo: Path, run: Cli) -> None:
    """Each example in a hot command's --help, typed as shown, works."""
    import shlex

    from contextd.client.commands import EXAMPLES

    for name in ("add", "decide", "constrain", "pipeline", "checkpoint", "search", "recall"):
        for line in "\n".join(EXAMPLES[name]).replace("\\\n", " ").split("\n"):
            words = shlex.split(line)
            assert words[0] == "contextd"
            result = run(*words[1:])
            assert result.exit_code == 0, (line, result.stderr)


def test_one_note_is_one_note(tmp_path: Path, run: Cli) -> None:
    from tests.conftest import make_repo

    folder = make_repo(tmp_path / "notes")
    (folder / "CLAUDE.md").write_text(
        "# Project\n\n- Deploys need the VPN on release days, or the upload hangs.\n",
        encoding="utf-8",
    )
    os.chdir(folder)
    result = run("attach")
    assert result.exit_code == 0, result.output
    assert "Imported 1 note from CLAUDE.md" in result.stdout
