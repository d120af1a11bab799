"""The MCP server borrows the daemon's warm model: one copy of it serves both processes, the
vectors are the ones the server would compute itself, and when no daemon answers the server
loads the model and carries on."""

import json
import math
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp.types import Implementation

from contextd.embeddings.from_daemon import DaemonModel
from contextd.embeddings.local import LocalMiniLM, find_model_dir
from contextd.ipc import client
from contextd.ipc.launch import start_detached
from mcp import Client, StdioServerParameters
from tests.conftest import DECISION, Cli
from tests.daemon._support import Daemons
from tests.mcp.test_server import payload

pytestmark = pytest.mark.skipif(find_model_dir() is None, reason="needs the local model")

TEXTS = [f"note {i}: the ledger rounds invoices half up, step {i}" for i in range(70)]
# What the server's process maps once it runs the model itself.
MODEL_LIBRARIES = ("onnxruntime", "tokenizers")


@pytest.fixture
def local_home(home: Path) -> Path:
    (home / "config.toml").write_text(
        '[embeddings]\nprovider = "local"\n[hooks]\nautostart_daemon = false\n', encoding="utf-8"
    )
    return home


@pytest.fixture
def own() -> Iterator[LocalMiniLM]:
    yield LocalMiniLM()


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def same_vectors(got: list[list[float]], want: list[list[float]]) -> bool:
    return len(got) == len(want) and all(
        cosine(g, w) > 0.9999 for g, w in zip(got, want, strict=True)
    )


def embed_request(home: Path, model: str, *, query: bool = False) -> dict[str, object]:
    return {
        "kind": "embed",
        "home": str(home),
        "stamp": client.code_stamp(),
        "model": model,
        "query": query,
    }


@pytest.mark.usefixtures("repo")
def test_vectors_come_from_the_daemon_without_loading_the_model_here(
    local_home: Path, daemons: Daemons, own: LocalMiniLM
) -> None:
    daemons.start()
    borrowed = DaemonModel(LocalMiniLM(), local_home)
    borrowed.warm()

    query = borrowed.embed_query("why NATS for the task queue")
    documents = borrowed.embed_documents(TEXTS)  # more than one request carries

    assert borrowed.borrowed
    assert same_vectors([query], [own.embed_query("why NATS for the task queue")])
    assert same_vectors(documents, own.embed_documents(TEXTS))


@pytest.mark.usefixtures("repo")
def test_without_a_daemon_the_model_loads_here_and_stays(
    local_home: Path, daemons: Daemons, own: LocalMiniLM
) -> None:
    borrowed = DaemonModel(LocalMiniLM(), local_home)
    first = borrowed.embed_documents(TEXTS[:3])
    assert not borrowed.borrowed
    daemons.start()  # a daemon that comes later is not asked: one model from now on
    assert not borrowed.borrowed
    assert same_vectors(
        first + [borrowed.embed_query("task queue")],
        own.embed_documents([*TEXTS[:3], "task queue"]),
    )


@pytest.mark.usefixtures("repo")
def test_warming_starts_a_daemon_and_waits_for_it_rather_than_load_a_second_model(
    local_home: Path, daemons: Daemons, own: LocalMiniLM
) -> None:
    borrowed = DaemonModel(LocalMiniLM(), local_home, start=lambda: start_detached(local_home))
    borrowed.warm()
    assert daemons.adopt_running() is not None
    assert borrowed.borrowed
    assert same_vectors([borrowed.embed_query("queue")], [own.embed_query("queue")])


@pytest.mark.usefixtures("repo")
def test_the_daemon_embeds_only_with_its_own_model_and_only_well_formed_texts(
    local_home: Path, daemons: Daemons
) -> None:
    daemons.start()
    model = LocalMiniLM().id
    home = str(local_home)
    good = json.dumps(["one", "two"]).encode()
    answered = client.ask(home, embed_request(local_home, model), good)
    assert answered is not None and answered[0]["count"] == 2
    assert len(answered[1]) == 2 * 384 * 4

    refused = [
        (embed_request(local_home, model + ":int8"), good),  # another model's vectors
        (embed_request(local_home, model, query=True), good),  # a query is one text
        (embed_request(local_home, model), b'{"text": "one"}'),
        (embed_request(local_home, model), b"[]"),
        (embed_request(local_home, model), json.dumps(["x"] * 65).encode()),
        (embed_request(local_home, model), b'["one", 2]'),
        ({**embed_request(local_home, model), "stamp": "other code"}, good),
    ]
    for request, body in refused:
        assert client.ask(home, request, body) is None, request


def test_the_mcp_server_answers_with_the_daemons_model_and_holds_no_copy(
    local_home: Path, repo: Path, run: Cli, daemons: Daemons
) -> None:
    written = run.json(*DECISION)
    daemons.start()
    maps: list[str] = []

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "contextd", "mcp", "serve"],
            env=dict(os.environ),
            cwd=str(repo),
        )
        with anyio.fail_after(90):
            async with Client(params, client_info=Implementation(name="t", version="1")) as mcp:
                found = payload(
                    await mcp.call_tool("search", {"query": "message broker for background jobs"})
                )
                assert [r["id"] for r in found["results"]][:1] == [written["id"]]
                stored = payload(
                    await mcp.call_tool(
                        "remember",
                        {
                            "text": "The staging queue drains nightly; never purge it by hand.",
                            "category": "gotcha",
                        },
                    )
                )
                assert stored["id"]
                maps.extend(_server_maps())

    anyio.run(main)
    assert maps, "the server process was not found"
    assert not [line for line in maps if any(lib in line for lib in MODEL_LIBRARIES)]


def _server_maps() -> list[str]:
    """The memory maps of this test's `contextd mcp serve` child."""
    me = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii")
            command = (entry / "cmdline").read_bytes().split(b"\0")
            if stat.rsplit(")", 1)[1].split()[1] == me and b"serve" in command:
                return (entry / "maps").read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
    return []
