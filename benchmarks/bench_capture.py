"""What capture adds to the end-of-turn and session-end hooks: the handlers timed as the daemon
runs them (in process, warm), with `[capture]` on and off, in a real git repository.

Run: .venv/bin/python benchmarks/bench_capture.py [--rounds 40] [--files 2000]

The repository holds --files tracked files and a few commits; each Stop round asks a session
that changed one file and recorded nothing (the request is made once per session, so each
round is a new session: the worst case, the full check). Session-end rounds draft and write a
checkpoint for a session with two commits. The third run adds `[capture] extractor`: each
round's transcript grew, so both hooks also start the detached reading (the process it starts
is waited for between rounds, outside the timing; its endpoint is a closed loopback port).
"""

import argparse
import json
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


def payload(repo: Path, event: str, session: str, transcript: str = "") -> dict[str, object]:
    return {
        "session_id": session,
        "cwd": str(repo),
        "hook_event_name": event,
        "transcript_path": transcript,
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
        transcript = root / "transcript.jsonl"
        closed = "http://127.0.0.1:9/v1"  # the discard port: nothing listens there
        runs = {
            "capture off              ": "stop_prompt = false\ndraft_checkpoints = false\n",
            "capture on, no edit hook ": "stop_prompt = true\ndraft_checkpoints = true\n",
            "capture on, edit hook saw": "stop_prompt = true\ndraft_checkpoints = true\n",
            "  + extractor            ": f'extractor = "openai"\napi_base = "{closed}"\n',
        }
        for number, (label, capture) in enumerate(runs.items()):
            edit_hook = "saw" in label or "extractor" in label
            (home / "config.toml").write_text(
                '[embeddings]\nprovider = "hashing"\n[hooks]\nautostart_daemon = false\n'
                f'[capture]\n{capture}model = "m"\n',
                encoding="utf-8",
            )
            extracting = "extractor" in capture
            rounds = max(1, args.rounds // 4) if extracting else args.rounds
            with open_app(load_settings(cwd=repo)) as app:
                stops, ends = [], []
                for n in range(rounds):
                    session = f"bench-{number}-{n}"
                    where = str(transcript) if extracting else ""
                    handle(app, "session-start", payload(repo, "SessionStart", session), None, repo)
                    (repo / "pkg0" / "module0.py").write_text(
                        f"VALUE = -{n} - 1\n", encoding="utf-8"
                    )
                    if edit_hook:  # as Claude Code's PostToolUse on Write runs it
                        edited = payload(repo, "PostToolUse", session) | {
                            "tool_name": "Write",
                            "tool_input": {"file_path": str(repo / "pkg0" / "module0.py")},
                        }
                        handle(app, "post-edit", edited, None, repo)
                    grow(transcript, n)
                    started = time.perf_counter()
                    handle(app, "stop", payload(repo, "Stop", session, where), None, repo)
                    stops.append((time.perf_counter() - started) * 1000)
                    git(repo, "commit", "-qam", f"Change {label} {n}")
                    if edit_hook:  # as Claude Code's PostToolUse on Bash runs it
                        done = payload(repo, "PostToolUse", session) | {
                            "tool_name": "Bash",
                            "tool_input": {"command": f'git commit -qam "Change {n}"'},
                            "tool_response": {"stdout": "", "stderr": "", "interrupted": False},
                        }
                        handle(app, "post-bash", done, None, repo)
                    wait_for_readings(home)
                    grow(transcript, n)
                    started = time.perf_counter()
                    handle(
                        app, "session-end", payload(repo, "SessionEnd", session, where), None, repo
                    )
                    ends.append((time.perf_counter() - started) * 1000)
                    wait_for_readings(home)
            timing = f"stop {median_ms(stops)}   session-end {median_ms(ends)}"
            print(f"{label}  {timing}  ({rounds} rounds)")


def grow(transcript: Path, n: int) -> None:
    line = json.dumps({"type": "user", "message": {"role": "user", "content": f"turn {n}"}})
    line += "\n"
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(line)
    transcript.chmod(0o600)


def wait_for_readings(home: Path) -> None:
    """Until no detached reading started for `home` runs (outside the timing)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        running = False
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"capture-extract" in argv and os.fsencode(home) in argv:
                running = True
        if not running:
            return
        time.sleep(0.05)


if __name__ == "__main__":
    main()
