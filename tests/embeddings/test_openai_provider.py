"""The OpenAI-compatible provider against a real HTTP server on 127.0.0.1, and through the CLI."""

import json
import math
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from contextd.embeddings.hashing import HashingEmbedder
from contextd.embeddings.openai import OpenAICompatible
from contextd.errors import ProviderUnavailableError
from tests.conftest import DECISION, Cli

MODEL = "hash-embed"


@dataclass
class Behaviour:
    """What the fake endpoint answers, and what it was sent."""

    dimensions: int = 16
    status: int = 200
    shuffle: bool = False
    raw: bytes | None = None  # sent as is with HTTP 200 instead of embeddings
    requests: list[tuple[dict[str, str], dict[str, Any]]] = field(default_factory=list)


class EmbeddingServer(ThreadingHTTPServer):
    daemon_threads = True
    behaviour: Behaviour

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class Handler(BaseHTTPRequestHandler):
    server: EmbeddingServer

    def do_POST(self) -> None:
        behaviour = self.server.behaviour
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length).decode("utf-8"))
        behaviour.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
        if self.path != "/v1/embeddings":
            self._send(404, b'{"error": "not found"}')
            return
        if behaviour.raw is not None:
            self._send(200, behaviour.raw)
            return
        if behaviour.status != 200:
            self._send(behaviour.status, b'{"error": "the model crashed"}')
            return
        vectors = HashingEmbedder(behaviour.dimensions).embed_documents(body["input"])
        # Scaled so the client must normalise; shuffled when asked, so it must sort by index.
        data = [
            {"object": "embedding", "index": i, "embedding": [3.0 * x for x in v]}
            for i, v in enumerate(vectors)
        ]
        if behaviour.shuffle:
            data = data[1::2][::-1] + data[::2]  # not in input order
        payload = {"object": "list", "data": data, "model": body["model"]}
        self._send(200, json.dumps(payload).encode("utf-8"))

    def _send(self, status: int, content: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    httpd = EmbeddingServer(("127.0.0.1", 0), Handler)
    httpd.behaviour = Behaviour()
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
def closed_port() -> int:
    """A port nothing listens on: bound, read, then released."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _provider(api_base: str, dimensions: int = 16, api_key_env: str = "") -> OpenAICompatible:
    return OpenAICompatible(
        model=MODEL,
        api_base=api_base,
        dimensions=dimensions,
        api_key_env=api_key_env,
        timeout_s=5.0,
    )


def test_vectors_come_back_unit_length_in_input_order_even_when_data_is_shuffled(
    server: EmbeddingServer,
) -> None:
    server.behaviour.shuffle = True
    texts = [f"text number {i} about {word}" for i, word in enumerate("abcdefghij")]
    provider = _provider(server.api_base + "/")
    vectors = provider.embed_documents(texts)
    expected = HashingEmbedder(16).embed_documents(texts)
    assert len(vectors) == len(expected)
    for vector, wanted in zip(vectors, expected, strict=True):
        assert vector == pytest.approx(wanted, abs=1e-9)
        assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, rel_tol=1e-9)
    assert provider.id == f"openai:{MODEL}:16"
    ((headers, body),) = server.behaviour.requests
    assert body == {"model": MODEL, "input": texts}
    assert "authorization" not in headers


def test_more_texts_than_a_batch_are_sent_in_several_requests_and_kept_in_order(
    server: EmbeddingServer,
) -> None:
    texts = [f"record {i}" for i in range(150)]
    vectors = _provider(server.api_base).embed_documents(texts)
    expected = HashingEmbedder(16).embed_documents(texts)
    assert len(vectors) == len(expected)
    for vector, wanted in zip(vectors, expected, strict=True):
        assert vector == pytest.approx(wanted, abs=1e-9)
    assert [len(body["input"]) for _, body in server.behaviour.requests] == [64, 64, 22]


def test_the_api_key_is_read_from_the_named_variable_and_sent_as_a_bearer_token(
    server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTEXTD_TEST_EMBED_KEY", "sk-test-123")
    vector = _provider(server.api_base, api_key_env="CONTEXTD_TEST_EMBED_KEY").embed_query("hi")
    assert len(vector) == 16
    ((headers, _),) = server.behaviour.requests
    assert headers["authorization"] == "Bearer sk-test-123"


def test_a_missing_key_variable_is_named_and_nothing_is_sent(
    server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CONTEXTD_TEST_EMBED_KEY", raising=False)
    provider = _provider(server.api_base, api_key_env="CONTEXTD_TEST_EMBED_KEY")
    with pytest.raises(ProviderUnavailableError, match="CONTEXTD_TEST_EMBED_KEY"):
        provider.embed_documents(["hello"])
    assert server.behaviour.requests == []


def test_an_http_error_becomes_provider_unavailable_with_the_status(
    server: EmbeddingServer,
) -> None:
    server.behaviour.status = 500
    with pytest.raises(ProviderUnavailableError, match="HTTP 500") as caught:
        _provider(server.api_base).embed_query("hello")
    assert "the model crashed" in str(caught.value)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"error": "no such model"}',
        b'{"data": [[0.1, 0.2, 0.3]]}',
        b"<html><body>Welcome to the dashboard</body></html>",
    ],
    ids=["no-data", "bare-lists", "not-json"],
)
def test_a_malformed_answer_becomes_provider_unavailable(
    server: EmbeddingServer, raw: bytes
) -> None:
    server.behaviour.raw = raw
    with pytest.raises(ProviderUnavailableError, match="/v1/embeddings"):
        _provider(server.api_base).embed_query("hello")


@pytest.mark.usefixtures("repo")
def test_a_write_succeeds_when_the_endpoint_answers_something_that_is_not_json(
    run: Cli, server: EmbeddingServer
) -> None:
    """api_base pointing at a web page instead of an embeddings API must not block writes."""
    server.behaviour.raw = b"<html><body>Welcome to the dashboard</body></html>"
    for key, value in (
        ("embeddings.provider", "openai"),
        ("embeddings.api_base", server.api_base),
        ("embeddings.dimensions", "16"),
    ):
        result = run("config", "set", key, value)
        assert result.exit_code == 0, result.output
    record = run(*DECISION, "--json")
    assert record.exit_code == 0, record.output
    found = run("search", "task queue", "--json")
    assert found.exit_code == 0, found.output
    assert "full-text" in json.loads(found.stdout)["degraded"]


def test_a_width_mismatch_tells_the_command_that_fixes_it(server: EmbeddingServer) -> None:
    server.behaviour.dimensions = 8
    with pytest.raises(ProviderUnavailableError) as caught:
        _provider(server.api_base, dimensions=16).embed_query("hello")
    message = str(caught.value)
    assert "contextd config set embeddings.dimensions 8" in message
    assert "contextd refresh --force-embeddings" in message


def test_a_closed_port_becomes_provider_unavailable(closed_port: int) -> None:
    provider = _provider(f"http://127.0.0.1:{closed_port}/v1")
    with pytest.raises(ProviderUnavailableError, match="did not answer"):
        provider.embed_query("hello")


@pytest.mark.usefixtures("repo")
def test_cli_writes_without_the_endpoint_then_catches_up_once_it_answers(
    run: Cli, server: EmbeddingServer, closed_port: int
) -> None:
    for key, value in (
        ("embeddings.provider", "openai"),
        ("embeddings.model", MODEL),
        ("embeddings.api_base", f"http://127.0.0.1:{closed_port}/v1"),
        ("embeddings.dimensions", "384"),
    ):
        result = run("config", "set", key, value)
        assert result.exit_code == 0, result.output

    # Endpoint down: the write succeeds without a vector and search falls back to full-text.
    record = run.json(*DECISION)
    found = run.json("search", "task queue")
    assert [hit["id"] for hit in found["results"]] == [record["id"]]
    assert isinstance(found["degraded"], str) and "full-text" in found["degraded"]

    check = run("config", "--check")
    assert check.exit_code == 5
    assert check.stderr.startswith("Error: ") and check.stderr.count("\n") == 1
    assert str(closed_port) in check.stderr
    assert server.behaviour.requests == []

    # Endpoint up: the check passes, and the first search embeds the record stored meanwhile.
    server.behaviour.dimensions = 384
    result = run("config", "set", "embeddings.api_base", server.api_base)
    assert result.exit_code == 0, result.output
    report = run.json("config", "--check")["check"]
    assert report["provider"] == f"openai:{MODEL}:384"
    assert report["dimensions"] == 384
    assert report["index"]["embedded"] == 0 and report["index"]["records"] == 1
    assert report["fix"] == "contextd refresh"

    found = run.json("search", "task queue")
    assert "degraded" not in found
    assert [hit["id"] for hit in found["results"]] == [record["id"]]
    embedded_texts = [text for _, body in server.behaviour.requests for text in body["input"]]
    assert any(text.startswith("Use NATS for the task queue") for text in embedded_texts)

    after = run.json("config", "--check")["check"]
    assert after["index"]["embedded"] == 1
    assert after["fix"] is None
