"""`refresh --summarize`: a chat endpoint proposes one record per cluster of similar records; a
person accepts it, and it is written as any write is and supersedes the cluster. The endpoint
here is a stand-in HTTP server on loopback answering /v1/chat/completions."""

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tests.core.test_refresh import refresh_in_a_terminal

FIRST = "The task queue retries a failed job three times before it is dead-lettered"
SECOND = "The task queue retries a failed job twice and then it is dead-lettered"
MERGED = {
    "kind": "memory",
    "title": "The task queue retries a failed job before it is dead-lettered (two or three times)",
    "category": "gotcha",
    "body": {},
    "tags": ["queue", "retries"],
}


class StandIn:
    """What the endpoint answers next, and what it was asked."""

    def __init__(self) -> None:
        self.status = 200
        self.content: str = json.dumps(MERGED)
        self.raw: bytes | None = None  # a whole body instead of a chat completion
        self.delay = 0.0
        self.asked: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    def body(self) -> bytes:
        if self.raw is not None:
            return self.raw
        reply = {"choices": [{"message": {"role": "assistant", "content": self.content}}]}
        return json.dumps(reply).encode()


def _handler(stand_in: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            length = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(length))
            if self.path != "/v1/chat/completions":
                self.send_error(404)
                return
            stand_in.asked.append(request)
            stand_in.headers.append(dict(self.headers))
            time.sleep(stand_in.delay)
            body = stand_in.body()
            try:
                self.send_response(stand_in.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (the timeout test)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def endpoint(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[StandIn]:
    stand_in = StandIn()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(stand_in))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _configure(home, f"http://127.0.0.1:{server.server_address[1]}/v1")
    monkeypatch.setenv("CHAT_TEST_KEY", "sk-stand-in")
    yield stand_in
    server.shutdown()
    server.server_close()


def _configure(home: Path, api_base: str, timeout: float = 5.0) -> None:
    config = home / "config.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(
        text + '[refresh]\nsummarizer = "openai"\n'
        f'[chat]\napi_base = "{api_base}"\nmodel = "stand-in"\napi_key_env = "CHAT_TEST_KEY"\n'
        f"timeout_s = {timeout}\nmax_reply_kb = 4\n",
        encoding="utf-8",
    )


def _cluster(run: Cli) -> list[str]:
    first = run.json("add", FIRST, "--category", "gotcha", "--tag", "queue", "--priority", "4")
    second = run.json("add", SECOND, "--category", "gotcha", "--force", "--hint", "DLQ")
    return [first["id"], second["id"]]


def _summaries(run: Cli, *extra: str) -> list[dict[str, Any]]:
    summaries: list[dict[str, Any]] = run.json("refresh", "--summarize", *extra)["summaries"]
    return summaries


@pytest.mark.usefixtures("repo")
def test_a_proposal_is_listed_and_nothing_is_written_until_accepted(
    run: Cli, endpoint: StandIn
) -> None:
    ids = _cluster(run)
    [summary] = _summaries(run)
    assert summary["records"] == ids and summary["accepted"] is None
    assert summary["proposal"]["title"] == MERGED["title"]
    assert summary["proposal"]["kind"] == "memory" and summary["problem"] is None
    [asked] = endpoint.asked
    assert asked["model"] == "stand-in"
    question = asked["messages"][1]["content"]
    assert FIRST in question and SECOND in question
    assert endpoint.headers[0]["Authorization"] == "Bearer sk-stand-in"
    assert all(run.json("show", rid)["status"] == "active" for rid in ids)
    text = run("refresh", "--summarize").stdout
    assert f"proposed gotcha: {MERGED['title']}" in text
    assert "Nothing was accepted: `contextd refresh --summarize --accept ID`" in text


@pytest.mark.usefixtures("repo")
def test_an_accepted_proposal_is_written_as_an_agents_record_and_supersedes_the_cluster(
    run: Cli, endpoint: StandIn
) -> None:
    ids = _cluster(run)
    [summary] = _summaries(run, "--accept", ids[1][:13])
    new = run.json("show", summary["accepted"])
    assert new["title"] == MERGED["title"] and new["origin"] == "agent"
    assert new["tags"] == ["queue", "retries"] and new["retrieval_hints"] == ["DLQ"]
    assert new["priority"] == 4 and new["category"] == "gotcha"
    for rid in ids:
        old = run.json("show", rid)
        assert old["status"] == "superseded" and old["superseded_by"] == new["id"]
    assert run.json("refresh", "--summarize")["summaries"] == []  # nothing left to summarize


def test_a_person_sees_the_proposal_and_accepts_it_in_a_terminal(
    repo: Path, run: Cli, endpoint: StandIn
) -> None:
    ids = _cluster(run)
    code, output = refresh_in_a_terminal(repo, b"n\n", "--summarize")
    assert code == 0, output
    assert output.index(f"proposed gotcha: {MERGED['title']}") < output.index("Accept it")
    assert run.json("show", ids[0])["status"] == "active"
    code, output = refresh_in_a_terminal(repo, b"y\n", "--summarize")
    assert code == 0, output
    assert "accepted:" in output
    assert run.json("show", ids[0])["status"] == "superseded"


@pytest.mark.usefixtures("repo")
def test_yes_accepts_every_proposal_and_a_proposal_missing_a_field_takes_the_clusters(
    run: Cli, endpoint: StandIn
) -> None:
    ids = _cluster(run)
    endpoint.content = json.dumps({"kind": "memory", "title": MERGED["title"]})
    [summary] = _summaries(run, "--yes")
    new = run.json("show", summary["accepted"])
    assert new["category"] == "gotcha" and new["tags"] == ["queue"]
    assert run.json("show", ids[0])["superseded_by"] == new["id"]


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ({"content": "Sure! Here is the record you asked for."}, "holding one JSON object"),
        ({"content": json.dumps(["not", "an", "object"])}, "holding one JSON object"),
        ({"raw": b"<html>gateway</html>"}, "holding one JSON object"),
        ({"raw": b'{"choices": []}'}, "holding one JSON object"),
        ({"raw": b"x" * 5000}, "more than 4 KB"),
        ({"status": 500}, "answered HTTP 500"),
        ({"content": json.dumps(MERGED | {"kind": "checkpoint"})}, "kind must be one of"),
        ({"content": json.dumps(MERGED | {"title": ["a", "list"]})}, "title must be text"),
        ({"content": json.dumps(MERGED | {"tags": "queue"})}, "tags must be a list of texts"),
        (
            {
                "content": json.dumps(
                    MERGED | {"title": "Use key AKIAIOSFODNN7EXAMPLE for the queue"}
                )
            },
            "secret",
        ),
    ],
)
@pytest.mark.usefixtures("repo")
def test_a_bad_reply_is_one_sentence_and_writes_nothing(
    run: Cli, endpoint: StandIn, reply: dict[str, Any], problem: str
) -> None:
    ids = _cluster(run)
    endpoint.content = reply.get("content", endpoint.content)
    endpoint.raw = reply.get("raw")
    endpoint.status = reply.get("status", 200)
    [summary] = _summaries(run, "--yes")
    assert summary["proposal"] is None and summary["accepted"] is None
    assert problem in summary["problem"] and "\n" not in summary["problem"]
    assert "AKIA" not in summary["problem"] and "Sure!" not in summary["problem"]
    assert all(run.json("show", rid)["status"] == "active" for rid in ids)
    result = run("refresh", "--summarize")
    assert result.exit_code == 0 and "no proposal:" in result.stdout
    assert "Traceback" not in result.output


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.mark.usefixtures("repo")
def test_an_unreachable_endpoint_is_one_sentence_and_stops_the_asking(
    run: Cli, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _configure(home, f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.setenv("CHAT_TEST_KEY", "sk-stand-in")
    ids = _cluster(run)
    run.json(
        "add", "Invoices are rounded to two decimals before they are stored", "--category", "gotcha"
    )
    run.json(
        "add",
        "Invoices are rounded to 2 decimals before being stored",
        "--category",
        "gotcha",
        "--force",
    )
    report = run.json("refresh", "--summarize", "--yes")
    assert len(report["clusters"]) == 2
    summaries = report["summaries"]
    assert len(summaries) == 1  # the other cluster was not asked about
    assert "could not be reached" in summaries[0]["problem"]
    assert all(run.json("show", rid)["status"] == "active" for rid in ids)


@pytest.mark.usefixtures("repo")
def test_an_endpoint_slower_than_the_timeout_is_given_up(
    run: Cli, home: Path, endpoint: StandIn
) -> None:
    config = home / "config.toml"
    config.write_text(
        config.read_text(encoding="utf-8").replace("timeout_s = 5.0", "timeout_s = 0.3"),
        encoding="utf-8",
    )
    endpoint.delay = 2.0
    _cluster(run)
    [summary] = _summaries(run)
    assert "did not answer within 0.3 s" in summary["problem"]


@pytest.mark.usefixtures("repo")
def test_a_missing_key_is_one_sentence(
    run: Cli, endpoint: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CHAT_TEST_KEY")
    _cluster(run)
    [summary] = _summaries(run)
    assert "CHAT_TEST_KEY (chat.api_key_env) is not set" in summary["problem"]
    assert endpoint.asked == []


@pytest.mark.usefixtures("repo")
def test_without_a_summarizer_configured_summarize_is_refused_before_anything_runs(
    run: Cli,
) -> None:
    ids = _cluster(run)
    result = run("refresh", "--summarize")
    assert result.exit_code == 5 and 'set refresh.summarizer to "openai"' in result.stderr
    assert "Traceback" not in result.output
    accept = run("refresh", "--accept", ids[0])
    assert accept.exit_code == 2 and "add --summarize" in accept.stderr


@pytest.mark.usefixtures("repo")
def test_accepting_a_record_in_no_cluster_is_refused(run: Cli, endpoint: StandIn) -> None:
    _cluster(run)
    alone = run.json("add", "Invoices are rounded to two decimals", "--category", "gotcha")
    result = run("refresh", "--summarize", "--accept", alone["id"])
    assert result.exit_code == 2 and "No cluster of similar records holds" in result.stderr
    assert endpoint.asked == []
