"""A fresh machine's view of installing contextd: `uv tool install <checkout>`, `pipx install
<checkout>` and the README's pip line (`python3 -m venv .venv && .venv/bin/pip install .`),
each followed by `contextd init` in a new home. Each must end with `status` finding the local
model in the home, `doctor` passing, and the tool's environment under 1 GB; the sizes and times
are printed.

uv and pipx come from the package index into a scratch virtualenv; everything is made under one
scratch folder, removed at the end. Where the package index cannot be reached, it says so and
skips (exit 0); so it does with CONTEXTD_SKIP_FRESH_INSTALL set. Package caches are the user's
(a CI run stays fast); `--fresh-caches` gives each installer an empty one, for a first
install's real times.

    python scripts/fresh_install_check.py [--only uv|pipx|pip] [--fresh-caches] [--keep]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
LIMIT_BYTES = 1 << 30  # the tool environment must stay under 1 GB (torch would be ~5 GB)
sys.path.insert(0, str(CHECKOUT / "src"))

from contextd import DISTRIBUTION  # noqa: E402
from contextd.embeddings.package_index import choose_index, shown_url  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("uv", "pipx", "pip"), action="append")
    parser.add_argument("--fresh-caches", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args()
    if os.environ.get("CONTEXTD_SKIP_FRESH_INSTALL"):
        print("fresh install check skipped: CONTEXTD_SKIP_FRESH_INSTALL is set")
        return 0
    index = choose_index()
    problem = _unreachable(index.url)
    if problem:
        print(
            f"fresh install check skipped: the package index {shown_url(index.url)} "
            f"cannot be reached here ({problem})"
        )
        return 0
    scratch = Path(tempfile.mkdtemp(prefix="contextd-fresh-"))
    failures: list[str] = []
    try:
        tools = _installers(scratch, args.fresh_caches)
        for way in args.only or ["uv", "pipx", "pip"]:
            try:
                _one_way(way, scratch, tools, args.fresh_caches)
            except Failed as exc:
                print(f"FAIL {way}: {exc}")
                failures.append(way)
    finally:
        if args.keep:
            print(f"scratch kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    print("fresh install check: " + (f"FAILED ({', '.join(failures)})" if failures else "ok"))
    return 1 if failures else 0


class Failed(Exception):
    pass


def _unreachable(url: str) -> str | None:
    import httpx

    try:
        httpx.get(f"{url.rstrip('/')}/uv/", timeout=10, follow_redirects=True)
    except httpx.HTTPError as exc:
        return type(exc).__name__
    return None


def _run(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[str, float]:
    started = time.perf_counter()
    done = subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, encoding="utf-8", timeout=1200
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-800:]
        raise Failed(f"`{' '.join(argv[:4])} …` exited {done.returncode}: {tail}")
    return done.stdout, seconds


def _size(path: Path) -> int:
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            file = Path(folder) / name
            if not file.is_symlink():
                total += file.stat().st_size
    return total


def _installers(scratch: Path, fresh: bool) -> Path:
    """A virtualenv with uv and pipx, from the package index."""
    venv = scratch / "installers"
    env = _env(scratch, fresh, "installers")
    _run([sys.executable, "-m", "venv", str(venv)], env)
    _out, seconds = _run(
        [str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", "uv", "pipx"],
        env,
    )
    print(f"uv and pipx installed into a scratch venv in {seconds:.1f} s")
    return venv / "bin"


def _env(scratch: Path, fresh: bool, name: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONTEXTD_", "VIRTUAL_ENV"))}
    if fresh:
        caches = scratch / "caches" / name
        env |= {"UV_CACHE_DIR": str(caches / "uv"), "PIP_CACHE_DIR": str(caches / "pip")}
    return env


def _one_way(way: str, scratch: Path, tools: Path, fresh: bool) -> None:
    env = _env(scratch, fresh, way)
    place = scratch / way
    if way == "uv":
        env |= {"UV_TOOL_DIR": str(place / "tools"), "UV_TOOL_BIN_DIR": str(place / "bin")}
        argv = [str(tools / "uv"), "tool", "install", "--quiet", str(CHECKOUT)]
        environment, exe = place / "tools" / DISTRIBUTION, place / "bin" / "contextd"
    elif way == "pipx":
        env |= {"PIPX_HOME": str(place / "pipx"), "PIPX_BIN_DIR": str(place / "bin")}
        argv = [str(tools / "pipx"), "install", str(CHECKOUT)]
        environment, exe = place / "pipx" / "venvs" / DISTRIBUTION, place / "bin" / "contextd"
    else:  # the README's line
        environment = place / ".venv"
        _run([sys.executable, "-m", "venv", str(environment)], env)
        argv = [str(environment / "bin" / "pip"), "install", "-q", str(CHECKOUT)]
        exe = environment / "bin" / "contextd"
    _out, install_s = _run(argv, env)
    tool_bytes = _size(environment)
    home, user = place / "home", place / "user"
    user.mkdir(parents=True)
    env |= {"CONTEXTD_HOME": str(home), "HOME": str(user)}
    out, init_s = _run([str(exe), "init", "--json"], env)
    model = json.loads(out)["model"]
    if model["action"] != "installed":
        raise Failed(f"init did not install the model into the home: {model}")
    project = place / "project"
    project.mkdir()
    _run(["git", "init", "-q", str(project)], env)
    _run([str(exe), "attach"], env, cwd=project)
    status = json.loads(_run([str(exe), "status", "--json"], env, cwd=project)[0])
    detail = status["embeddings"]["detail"]
    if status["embeddings"]["state"] != "ok" or "in the contextd home" not in detail:
        raise Failed(f"status does not find the model in the home: {detail}")
    _run([str(exe), "doctor"], env)
    home_bytes = _size(home / "models")
    print(
        f"{way:>4}: install {install_s:5.1f} s, environment {tool_bytes / 1e6:5.0f} MB; "
        f"init {init_s:5.1f} s (model {model['bytes'] / 1e6:.0f} MB fetched in "
        f"{model['seconds']:.1f} s, home models {home_bytes / 1e6:.0f} MB); status: {detail}"
    )
    if tool_bytes >= LIMIT_BYTES:
        raise Failed(f"the tool environment is {tool_bytes / 1e6:.0f} MB, over 1 GB")


if __name__ == "__main__":
    sys.exit(main())
