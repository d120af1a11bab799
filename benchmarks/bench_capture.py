"""What capture adds to the end-of-turn and session-end hooks: the handlers timed as the daemon
runs them (in process, warm), with `[capture]` on and off, in a real git repository.

Run: .venv/bin/python benchmarks/bench_capture.py [--rounds 40] [--files 2000]

The repository holds --files tracked files and a few commits; each Stop round asks a session
that changed one file and recorded nothing (the request is made once per session, so each
round is a new session: the worst case, the full check). Session-end rounds draft and write a
checkpoint for a session with two commits.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from contextd.app import open_app
from contextd.config import load_settings
from contextd.hooks.handlers import handle

_IDENTITY = ["-c", "user.name=Bench", "-c", "user.email=bench@example.com"]


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *_IDENTITY, *args], check=True, capture_output=True)


def make_repo(root: Path, files: int) -> Path:
    repo = root / "project"
    repo.mkdir()
    git(repo, "init", "-q")
    for n in range(files):
        folder = repo / f"pkg{n % 40}"
        folder.mkdir(exist_ok=True)
        (folder / f"module{n}.py").write_text(f"VALUE = {n}\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Start")
    return repo


def payload(repo: Path, event: str, session: str) -> dict[str, object]:
    return {
        "session_id": session,
        "cwd": str(repo),
        "hook_event_name": event,
        "transcript_path": "",
        "stop_hook_active": False,
        "source": "startup",
    }


def median_ms(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"p50 {statistics.median(times):6.1f} ms  p95 {p95:6.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--files", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        home = root / "home"
        home.mkdir(mode=0o700)
        os.environ["CONTEXTD_HOME"] = str(home)
        os.environ["GIT_CONFIG_GLOBAL"] = str(root / "gitconfig")
        repo = make_repo(root, args.files)
        subprocess.run(
            [sys.executable, "-m", "contextd", "attach"], cwd=repo, check=True, capture_output=True
        )
        for capture in ("false", "true"):
            (home / "config.toml").write_text(
                '[embeddings]\nprovider = "hashing"\n[hooks]\nautostart_daemon = false\n'
                f"[capture]\nstop_prompt = {capture}\ndraft_checkpoints = {capture}\n",
                encoding="utf-8",
            )
            with open_app(load_settings(cwd=repo)) as app:
                stops, ends = [], []
                for n in range(args.rounds):
                    session = f"bench-{capture}-{n}"
                    handle(app, "session-start", payload(repo, "SessionStart", session), None, repo)
                    (repo / "pkg0" / "module0.py").write_text(
                        f"VALUE = -{n} - 1\n", encoding="utf-8"
                    )
                    started = time.perf_counter()
                    handle(app, "stop", payload(repo, "Stop", session), None, repo)
                    stops.append((time.perf_counter() - started) * 1000)
                    git(repo, "commit", "-qam", f"Change {n}")
                    started = time.perf_counter()
                    handle(app, "session-end", payload(repo, "SessionEnd", session), None, repo)
                    ends.append((time.perf_counter() - started) * 1000)
            label = "capture on " if capture == "true" else "capture off"
            print(f"{label}  stop {median_ms(stops)}   session-end {median_ms(ends)}")


if __name__ == "__main__":
    main()
