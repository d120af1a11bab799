"""The hook's client path is the standard library only: it runs on every prompt."""

import json
import subprocess
import sys
from pathlib import Path

from tests.hooks._support import hook_env

HEAVY = {
    "click",
    "numpy",
    "mcp",
    "httpx",
    "tokenizers",
    "onnxruntime",
    "pathspec",
    "sqlite3",
    "_sqlite3",
    "tomllib",
    "contextd.app",
    "contextd.config",
    "contextd.cli",
    "contextd.hooks.handlers",
    "contextd.hooks.inprocess",
    "contextd.storage",
}
CLIENT_MODULES = {
    "contextd",
    "contextd.daemon",
    "contextd.daemon.client",
    "contextd.hooks",
    "contextd.hooks.entry",
}


def _is_stdlib(name: str) -> bool:
    return name.split(".")[0] in sys.stdlib_module_names


def test_importing_the_hook_entry_loads_only_the_standard_library(tmp_path: Path) -> None:
    script = (
        "import json, sys\n"
        "before = set(sys.modules)\n"
        "import contextd.hooks.entry\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=tmp_path,
        env=hook_env(),
        timeout=60,
        check=True,
    )
    loaded = set(json.loads(done.stdout))
    assert loaded >= CLIENT_MODULES
    assert not loaded & HEAVY, loaded & HEAVY
    foreign = {m for m in loaded - CLIENT_MODULES if not _is_stdlib(m)}
    assert foreign == set(), foreign


def test_python_m_contextd_hook_never_imports_the_cli(tmp_path: Path) -> None:
    # Garbage stdin and no daemon: the in-process path refuses it on parsing, before the store,
    # so what was imported is the dispatch in contextd.__main__, the entry and json.
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "contextd", "hook", "prompt"],
        input=b"not json",
        capture_output=True,
        cwd=tmp_path,
        env=hook_env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and done.stdout == b""
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.decode().splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "contextd.hooks.entry" in imported
    heavy = HEAVY - {"contextd.hooks.inprocess"}
    assert not imported & heavy, imported & heavy
