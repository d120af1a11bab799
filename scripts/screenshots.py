"""Screenshots of the web view for the README: a demo store (a decision history, constraints,
a pipeline, sessions with checkpoints), `contextd ui` on it, and headless Chromium saving PNGs
of the main pages into docs/.

Run: .venv/bin/python scripts/screenshots.py [NAME.png ...]   (needs Debian's chromium and
chromium-driver; names pick some of the pages, all by default)
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from contextd.app import App, open_app
from contextd.clock import now
from contextd.config import load_settings
from contextd.models import (
    CheckpointBody,
    ConstraintBody,
    DecisionBody,
    Hardness,
    Kind,
    MemoryBody,
    Origin,
    PipelineBody,
    Project,
    RecordDraft,
)
from contextd.storage import capture_sessions

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.web.browser import chromium  # noqa: E402

QUEUE = [
    (
        "Use Redis pub/sub for the task queue",
        "The GPU workers need a task queue that is simple to run next to the API",
        "Redis is already deployed for caching, and pub/sub adds no new service to operate",
    ),
    (
        "Use PostgreSQL SKIP LOCKED for the task queue",
        "Redis pub/sub dropped tasks whenever workers reconnected during a deploy",
        "Postgres is already deployed and SKIP LOCKED gives safe concurrent dequeue inside "
        "transactions we already trust",
    ),
    (
        "Use NATS JetStream for the task queue",
        "Polling the Postgres queue added load and latency to the primary database at peak",
        "JetStream keeps durable consumers with acks and replay, so a reconnecting worker "
        "resumes where it stopped",
    ),
]


TALL = {"ui-review.png": 1040}  # pages whose end must show too


def fill(home: Path) -> str:
    """The demo store; returns the id of the middle of the queue history."""
    (home / "config.toml").write_text(
        '[embeddings]\nprovider = "hashing"\n[capture]\nreview = "all"\nextractor = "openai"\n'
        'model = "qwen2.5:7b-instruct"\n',
        encoding="utf-8",
    )
    with open_app(load_settings(home=home)) as app:
        orbit = app.projects.ensure("orbit")
        app.projects.ensure("billing-api")
        previous: list[str] = []
        ids = []
        for title, problem, why in QUEUE:
            draft = RecordDraft(
                Kind.DECISION, title, DecisionBody(problem, why), tags=("queue", "workers")
            )
            made = app.writer.create(draft, orbit, supersedes=previous)
            previous = [made.id]
            ids.append(made.id)
        app.writer.create(
            RecordDraft(
                Kind.CONSTRAINT,
                "Never edit an applied migration",
                ConstraintBody(
                    "Applied migrations are checksummed in production; an edit breaks the deploy",
                    Hardness.ABSOLUTE,
                    ("migrations/**",),
                ),
                tags=("schema",),
            ),
            orbit,
        )
        app.writer.create(
            RecordDraft(
                Kind.PIPELINE,
                "Release",
                PipelineBody(
                    "Ship a tagged build to production safely",
                    ("run the test suite", "tag vX.Y.Z", "deploy with make release"),
                ),
                tags=("deploy",),
            ),
            orbit,
        )
        app.writer.create(
            RecordDraft(
                Kind.MEMORY,
                "Worker heartbeats time out after 30 s; the coordinator then requeues the lease",
                MemoryBody(),
                category="gotcha",
            ),
            orbit,
        )
        for agent, title, nxt in (
            ("claude", "Coordinator and worker heartbeat done", "Lease-based GPU allocation"),
            ("codex", "Lease-based allocation drafted", "Requeue on missed heartbeat"),
        ):
            app.sessions.start(orbit, agent)
            app.writer.create(
                RecordDraft(
                    Kind.CHECKPOINT,
                    title,
                    CheckpointBody(goal="Distributed GPU scheduling", next=(nxt,)),
                ),
                orbit,
            )
            app.sessions.end_open(orbit, title)
        app.sessions.start(orbit, "cursor")
        waiting_for_review(app, orbit)
    return ids[1]


def waiting_for_review(app: App, orbit: Project) -> None:
    """Drafts held for review (a proposal from a transcript, an agent's write, a drafted
    checkpoint) and two transcript readings, one of them not sent."""
    app.writer.record(
        RecordDraft(
            Kind.DECISION,
            "Cap job retries at 8 attempts, then dead-letter the job",
            DecisionBody(
                "Jobs retried forever and hid outages from the on-call person",
                "Eight attempts with backoff cover a five-minute blip; after that a person "
                "must look",
                "Retry forever with a longer delay",
            ),
            tags=("worker", "proposed"),
            origin=Origin.AGENT,
            asked_by="proposal",
        ),
        orbit,
    )
    app.writer.record(
        RecordDraft(
            Kind.CONSTRAINT,
            "A worker renews its lease at least every 20 s",
            ConstraintBody(
                "The coordinator requeues a lease after 30 s without a heartbeat",
                Hardness.STRONG,
                ("worker/**",),
            ),
            tags=("worker",),
            origin=Origin.AGENT,
            asked_by="agent",
        ),
        orbit,
    )
    app.writer.record(
        RecordDraft(
            Kind.CHECKPOINT,
            "Session ended after: Requeue leases on a missed heartbeat",
            CheckpointBody(
                "Distributed GPU scheduling",
                ("Committed: Requeue leases on a missed heartbeat", "Changed: worker/lease.py"),
            ),
            tags=("drafted",),
            origin=Origin.AGENT,
            asked_by="capture",
        ),
        orbit,
    )
    stamp = now()
    with app.db.transaction() as conn:
        for key, outcome in (
            ("7d1e0c52-claude", "proposed 1"),
            (
                "b4a9f310-claude",
                "not sent: the transcript holds what looks like a GitHub token; that part "
                "is never sent",
            ),
        ):
            session = capture_sessions.CaptureSession(
                key, orbit.id, "", stamp, stamp, "", "", (), None, None, None
            )
            capture_sessions.begin(conn, session)
            capture_sessions.extracted(conn, key, 4096, outcome, stamp)


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        middle = fill(home)
        process = subprocess.Popen(
            [sys.executable, "-m", "contextd", "--home", str(home), "ui", "--json", "--write"],
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        assert process.stdout is not None
        url = json.loads(process.stdout.readline())["url"]
        base = url.split("/?")[0]
        shots = {
            "ui-projects.png": "/",
            "ui-records.png": "/p/orbit/records?q=task+queue&status=all&explain=1",
            "ui-record.png": f"/r/{middle}",
            "ui-sessions.png": "/p/orbit/sessions",
            "ui-quality.png": "/p/orbit/quality?days=0",
            "ui-review.png": "/p/orbit/review",
        }
        wanted = set(sys.argv[1:])
        shots = {name: path for name, path in shots.items() if not wanted or name in wanted}
        os.environ["SE_OFFLINE"] = "true"
        try:
            with chromium() as driver:
                driver.set_window_size(1280, 820)
                driver.get(url)
                for name, path in shots.items():
                    driver.set_window_size(1280, TALL.get(name, 820))
                    driver.get(base + path)
                    time.sleep(0.3)
                    driver.save_screenshot(str(ROOT / "docs" / name))
                    print("docs/" + name)
        finally:
            os.kill(process.pid, signal.SIGINT)
            process.wait(timeout=30)


if __name__ == "__main__":
    main()
