"""Two `contextd serve` processes on one PostgreSQL, clients spread over both behind no
proxy at all (each client picks one): every write is seen through either process; one
process killed mid-run, its clients go on through the other and no acknowledged write is
lost. Nothing a session needs lives in one process (stateless HTTP; the store holds it)."""

from pathlib import Path

import anyio
import pytest

from tests.http.served import connect, new_token, result_data, run, serve, start, text_of

CLIENTS = 6


@pytest.fixture
def backend(backend: str) -> str:
    if backend != "postgresql":
        pytest.skip("several serve processes share a store on the team server")
    return backend


def test_two_processes_serve_one_team_and_survive_losing_one(
    backend: str, home: Path, repo: Path
) -> None:
    tokens = [new_token(home, f"dev{n}", "--project", "orbit") for n in range(CLIENTS)]
    acknowledged: dict[int, list[str]] = {n: [] for n in range(CLIENTS)}
    doomed = start(repo)
    with serve(repo) as survivor:
        urls = [doomed.url, survivor.url]

        async def client(n: int, killed: anyio.Event) -> None:
            url = urls[n % 2]
            i = 0
            while i < 12:
                try:
                    async with connect(url, tokens[n]) as session:
                        while i < 12:
                            arguments = {
                                "text": f"team note {n}-{i} omega{n}q{i}",
                                "category": "convention",
                                "force": True,
                            }
                            # A call to a server that died may never be answered: give up on
                            # it, as an agent's client does, and go on through the other.
                            with anyio.fail_after(30):
                                stored = await session.call_tool("remember", arguments)
                            acknowledged[n].append(result_data(stored)["id"])
                            i += 1
                            if i == 4 and n == 0:
                                await anyio.to_thread.run_sync(doomed.kill)
                                killed.set()
                except Exception:  # its server is gone: go on through the other
                    await killed.wait()
                    url = survivor.url

        async def body() -> None:
            killed = anyio.Event()
            async with anyio.create_task_group() as group:
                for n in range(CLIENTS):
                    group.start_soon(client, n, killed)
            every = [rid for ids in acknowledged.values() for rid in ids]
            assert len(every) == CLIENTS * 12 == len(set(every))
            for n in range(CLIENTS):  # each developer sees every team note, through either
                async with connect(survivor.url, tokens[n]) as session:
                    for other in range(CLIENTS):
                        found = await session.call_tool("search", {"query": f"omega{other}q11"})
                        assert f"team note {other}-11" in text_of(found)
                    for rid in acknowledged[(n + 1) % CLIENTS]:
                        entry = await session.call_tool("get_entry", {"id": rid})
                        assert result_data(entry)["id"] == rid

        try:
            run(body)
        finally:
            doomed.kill()
