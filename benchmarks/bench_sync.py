"""Sync timings: pull of N records (default 10k) through a real sshd on loopback when one is
installed (else a bundle import from a file), then the second, idempotent pull.

Run: .venv/bin/python benchmarks/bench_sync.py [--records N] [--provider hashing|local]
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import _one_shot  # noqa: F401  (one BLAS thread, as the CLI runs)
from tests.sync.sshd import SSHD, start_sshd  # noqa: E402

from contextd.app import open_app  # noqa: E402
from contextd.config import load_settings  # noqa: E402
from contextd.models import Kind, MemoryBody, RecordDraft  # noqa: E402

CONTEXTD = str(Path(sys.executable).parent / "contextd")
WORDS = "queue worker lease heartbeat shard replica cache index token budget migration".split()


def make_home(path: Path, provider: str) -> Path:
    path.mkdir(parents=True)
    (path / "config.toml").write_text(f'[embeddings]\nprovider = "{provider}"\n', encoding="utf-8")
    return path


def fill(home: Path, count: int) -> None:
    with open_app(load_settings(home=home, cwd=home)) as app:
        project = app.projects.ensure("orbit")
        drafts = [
            RecordDraft(
                kind=Kind.MEMORY,
                title=f"Note {i}: the {WORDS[i % 11]} of the {WORDS[(i * 7) % 11]} service "
                f"follows rule {i} so that batch {i // 100} stays consistent",
                body=MemoryBody(),
                category="architecture",
                tags=(WORDS[i % 11],),
            )
            for i in range(count)
        ]
        app.writer.create_many(drafts, project, force=True, short_title_ok=True)


def contextd(home: Path, *args: str) -> float:
    started = time.perf_counter()
    subprocess.run([CONTEXTD, "--home", str(home), *args], check=True, capture_output=True)
    return time.perf_counter() - started


def report(label: str, seconds: float) -> None:
    print(f"{label:<34} {seconds:6.2f} s")


def over_ssh(laptop: Path, lab: Path, folder: Path, count: int) -> None:
    server = start_sshd(folder / "sshd")
    try:
        options = ["--ssh-option=-F", f"--ssh-option={server.config}"]
        contextd(laptop, "remote", "add", "lab", "lab", "--command", CONTEXTD,
                 "--remote-home", str(lab), *options)  # fmt: skip
        report(f"remote pull over ssh ({count} new)", contextd(laptop, "remote", "pull", "lab"))
        report("remote pull again (all unchanged)", contextd(laptop, "remote", "pull", "lab"))
    finally:
        server.process.terminate()
        server.process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--provider", default="hashing")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-sync-"))
    try:
        lab = make_home(folder / "lab", args.provider)
        laptop = make_home(folder / "laptop", args.provider)
        started = time.perf_counter()
        fill(lab, args.records)
        report(f"fill the far store ({args.records})", time.perf_counter() - started)
        if SSHD is not None:
            over_ssh(laptop, lab, folder, args.records)
        else:
            print("sshd is not installed: timing a bundle import instead")
        bundle = folder / "lab.json"
        report("bundle export", contextd(lab, "bundle", "export", "--out", str(bundle)))
        fresh = make_home(folder / "desk", args.provider)
        seconds = contextd(fresh, "bundle", "import", "--file", str(bundle))
        report(f"bundle import ({args.records} new)", seconds)
        print(f"bundle size {bundle.stat().st_size / 1e6:.1f} MB")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
