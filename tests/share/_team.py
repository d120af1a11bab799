"""Two developers sharing one project's memory through git: a bare remote, two clones, two
homes, real git and real contextd processes."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

NATS = [
    "decide",
    "Use NATS JetStream for the task queue",
    "--problem",
    "Redis pub/sub dropped tasks whenever workers reconnected during a deploy",
    "--why",
    "JetStream keeps durable consumers with acks and replay, so a reconnecting worker resumes",
]
KAFKA = [
    "decide",
    "Move the task queue to Kafka with one partition per tenant",
    "--problem",
    "NATS could not keep per-tenant ordering once tenants shared one stream at peak load",
    "--why",
    "Kafka partitions give per-tenant ordering and replay, and the platform team runs it already",
]


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    return done.stdout


class Developer:
    """One teammate: a home of their own and a clone of the shared repository."""

    def __init__(self, name: str, root: Path, remote: Path) -> None:
        self.home = root / f"{name}-home"
        self.home.mkdir(mode=0o700)
        (self.home / "config.toml").write_text(
            '[embeddings]\nprovider = "hashing"\n[hooks]\nautostart_daemon = false\n',
            encoding="utf-8",
        )
        self.repo = root / f"{name}-repo"
        subprocess.run(["git", "clone", "-q", str(remote), str(self.repo)], check=True)
        git(self.repo, "config", "user.email", f"{name}@example.com")
        git(self.repo, "config", "user.name", name)

    def run(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k != "CONTEXTD_PROJECT"}
        env["CONTEXTD_HOME"] = str(self.home)
        return subprocess.run(
            [sys.executable, "-m", "contextd", *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            cwd=cwd or self.repo,
            env=env,
            timeout=120,
            check=False,
        )

    def json(self, *args: str, cwd: Path | None = None) -> Any:
        done = self.run(*args, "--json", cwd=cwd)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def titles(self, query: str = "task queue", *extra: str) -> set[str]:
        found = self.json("search", query, *extra)
        return {hit["title"] for hit in found["results"]}

    def commit_all(self, message: str) -> None:
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", message)
