"""`contextd status` asks the embedding endpoint and the vector store, briefly, and marks
only what answered: stand-in servers on 127.0.0.1, one that answers, one that never does,
and a port nobody listens on."""

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from contextd.embeddings.hashing import HashingEmbedder


class _Answers(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # an OpenAI-style /v1/embeddings
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        vectors = HashingEmbedder(16).embed_documents(body["input"])
        data = [{"index": i, "embedding": v} for i, v in enumerate(vectors)]
        self._send(json.dumps({"data": data}).encode())

    def do_GET(self) -> None:  # Qdrant's root answers its version
        self._send(b'{"title": "qdrant - vector search engine", "version": "1.12.0"}')

    def _send(self, content: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def answering() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def silent() -> Iterator[str]:
    """Accepts connections and never says a word."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


@pytest.fixture
def closed() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _configure(home: Path, embeddings: str, qdrant: str | None = None) -> None:
    text = (
        f'[embeddings]\nprovider = "openai"\napi_base = "{embeddings}/v1"\nmodel = "m"\n'
        "dimensions = 16\ntimeout_s = 30\n[hooks]\nautostart_daemon = false\n"
    )
    if qdrant is not None:
        text += f'[vectors]\nbackend = "qdrant"\nurl = "{qdrant}"\ntimeout_s = 30\n'
    (home / "config.toml").write_text(text, encoding="utf-8")


def _status(repo: Path, home: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {**os.environ, "CONTEXTD_HOME": str(home)}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "contextd", "status", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        encoding="utf-8",
        timeout=60,
    )
    return done, time.monotonic() - started


def _row(text: str, label: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(label))


def test_an_endpoint_that_answers_is_marked_ok(repo: Path, home: Path, answering: str) -> None:
    _configure(home, answering, qdrant=answering)
    done, _ = _status(repo, home, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["embeddings"]["state"] == "ok"
    assert report["vectors"] == {"state": "ok", "detail": f"Qdrant at {answering}/ answered"}
    text, _ = _status(repo, home)
    assert _row(text.stdout, "Embeddings").startswith("Embeddings   ✓ ")
    assert _row(text.stdout, "Semantic").startswith("Semantic     ✓ ")


def test_an_endpoint_nobody_listens_on_is_never_ticked(repo: Path, home: Path, closed: str) -> None:
    _configure(home, closed, qdrant=closed)
    done, _ = _status(repo, home, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["embeddings"]["state"] == "failed"
    assert "did not answer" in report["embeddings"]["detail"]
    assert report["vectors"]["state"] == "failed"
    text, _ = _status(repo, home)
    for label in ("Semantic", "Embeddings", "Vectors"):
        row = _row(text.stdout, label)
        assert "✓" not in row and "!" in row, row


def test_an_endpoint_that_never_answers_costs_status_a_moment_only(
    repo: Path, home: Path, silent: str
) -> None:
    _configure(home, silent, qdrant=silent)  # both configured to wait 30 s
    done, took = _status(repo, home, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["embeddings"]["state"] == "failed"
    assert report["vectors"]["state"] == "failed" and "within 1.5 s" in report["vectors"]["detail"]
    assert took < 15, took


def test_vectors_off_are_said_unchecked_not_ticked(repo: Path, home: Path) -> None:
    (home / "config.toml").write_text('[embeddings]\nprovider = "none"\n', encoding="utf-8")
    done, _ = _status(repo, home, "--json")
    report = json.loads(done.stdout)
    assert report["embeddings"]["state"] == report["vectors"]["state"] == "unchecked"
