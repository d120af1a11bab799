"""The installed console script and `python -m contextd`, run as real processes."""

import importlib
import json
import os
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import contextd.cli
from contextd.cli.main import COMMAND_MODULES
from tests.conftest import DECISION, make_repo


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=os.environ.copy(),
        timeout=60,
        check=False,
    )


def test_the_console_script_records_and_finds_a_decision(tmp_path: Path) -> None:
    beside_python = Path(sys.executable).parent / "contextd"
    exe = str(beside_python) if beside_python.exists() else shutil.which("contextd")
    if exe is None:
        pytest.fail("the `contextd` console script is not installed; run `pip install -e .`")
    project = make_repo(tmp_path / "orbit", "https://github.com/acme/orbit.git")
    assert _run([exe, "init"], project).returncode == 0
    assert _run([exe, "attach"], project).returncode == 0
    made = _run([exe, *DECISION, "--json"], project)
    assert made.returncode == 0, made.stderr
    record = json.loads(made.stdout)
    found = json.loads(_run([exe, "search", "task queue", "--json"], project).stdout)
    assert found["results"][0]["id"] == record["id"]


def test_python_dash_m_reports_a_user_error_without_a_traceback(tmp_path: Path) -> None:
    done = _run([sys.executable, "-m", "contextd", "show", "0123456789"], tmp_path)
    assert done.returncode == 3
    assert done.stderr.startswith("Error: No record")
    assert "Traceback" not in done.stderr
    unknown = _run([sys.executable, "-m", "contextd", "frobnicate"], tmp_path)
    assert unknown.returncode == 2


def test_importing_the_cli_stays_light() -> None:
    code = (
        "import sys, contextd.cli.main; heavy = {'numpy', 'mcp', 'httpx', 'tokenizers', "
        "'pydantic', 'tomlkit', 'markdown_it', 'pathspec', 'contextd.sync', 'contextd.mirror', "
        "'contextd.agents'} & set(sys.modules); print(sorted(heavy))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, encoding="utf-8", check=True
    )
    assert done.stdout.strip() == "[]"


def test_every_command_module_is_in_the_lazy_registry() -> None:
    found = {}
    for info in pkgutil.iter_modules(contextd.cli.__path__):
        module = importlib.import_module(f"contextd.cli.{info.name}")
        for command in getattr(module, "COMMANDS", []):
            found[command.name] = info.name
    assert found == COMMAND_MODULES


def test_help_lists_every_command_without_failing(tmp_path: Path) -> None:
    done = _run([sys.executable, "-m", "contextd", "--help"], tmp_path)
    assert done.returncode == 0
    listed = {line.split()[0] for line in done.stdout.split("Commands:")[1].splitlines() if line}
    assert listed == set(COMMAND_MODULES)


@pytest.mark.parametrize("args", [["--help"], ["archive", "--help"], ["memories", "--all"]])
def test_a_reader_that_went_away_ends_the_command_quietly(
    args: list[str], tmp_path: Path, repo: Path
) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `contextd ... | head` once head has exited
    try:
        done = subprocess.run(
            [sys.executable, "-m", "contextd", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            cwd=repo,
            env=os.environ.copy(),
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    # click ends a command whose output pipe closed with exit code 1, and says nothing.
    assert done.returncode in (0, 1) and done.stderr == b""
