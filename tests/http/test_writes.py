"""Writes over HTTP: eight clients writing at once lose none and leave the indexes whole, and
a server killed while writes are in flight loses none it acknowledged. On both stores."""

from pathlib import Path

import anyio
import pytest

from contextd.app import open_app
from contextd.config import load_settings
from contextd.models import SearchQuery
from tests.http.served import Served, connect, new_token, result_data, run, serve, start

CLIENTS = 8
WRITES = 20


async def _writer(url: str, token: str, n: int, count: int, acknowledged: list[str]) -> None:
    async with connect(url, token) as client:
        for i in range(count):
            stored = await client.call_tool(
                "remember",
                {
                    "text": f"writer{n} fact{i} kappa{n}x{i} about the deploy pipeline",
                    "category": "convention",
                    "force": True,
                },
            )
            acknowledged.append(result_data(stored)["id"])


def test_eight_clients_writing_at_once_store_every_write(
    backend: str, home: Path, repo: Path
) -> None:
    tokens = [new_token(home, f"dev{n}", "--project", "orbit") for n in range(CLIENTS)]
    acknowledged: list[str] = []
    with serve(repo) as served:

        async def body() -> None:
            async with anyio.create_task_group() as group:
                for n, token in enumerate(tokens):
                    group.start_soon(_writer, served.url, token, n, WRITES, acknowledged)

        run(body)
    assert len(acknowledged) == len(set(acknowledged)) == CLIENTS * WRITES
    with open_app(load_settings(cwd=repo)) as app:
        project = app.current_project()
        stored = app.reader.list_records(project)
        assert {r.id for r in stored} == set(acknowledged)
        if app.indexer is not None:
            assert app.index.pending() == 0  # every record has its vector
        for n in range(CLIENTS):
            for i in (0, WRITES - 1):
                hits = app.search.search(project, SearchQuery(f"kappa{n}x{i}"))
                assert [h.record.title for h in hits.hits][:1] == [
                    f"writer{n} fact{i} kappa{n}x{i} about the deploy pipeline"
                ]
        if backend == "sqlite":
            conn = app.db.connection()
            conn.execute("INSERT INTO records_fts(records_fts) VALUES ('integrity-check')")
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_server_killed_mid_write_loses_no_acknowledged_write(
    backend: str, home: Path, repo: Path
) -> None:
    token = new_token(home, "alice", "--project", "orbit")
    acknowledged: list[str] = []
    served: Served = start(repo)
    try:

        async def write_until_killed() -> None:
            async def one(n: int) -> None:
                try:
                    await _writer(served.url, token, n, 1000, acknowledged)
                except Exception:  # the server went away mid-call: that write is not acknowledged
                    return

            async with anyio.create_task_group() as group:
                for n in range(4):
                    group.start_soon(one, n)
                while len(acknowledged) < 24:
                    await anyio.sleep(0.01)
                await anyio.to_thread.run_sync(served.kill)  # while writes are in flight

        run(write_until_killed)
    finally:
        served.kill()
    assert len(acknowledged) >= 24
    with serve(repo) as again:

        async def read_back() -> None:
            async with connect(again.url, token) as client:
                for record_id in acknowledged:
                    found = await client.call_tool("get_entry", {"id": record_id})
                    assert result_data(found)["id"] == record_id

        run(read_back)


@pytest.fixture
def repo(backend: str, repo: Path) -> Path:
    return repo
