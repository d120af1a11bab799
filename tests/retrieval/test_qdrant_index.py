"""The Qdrant vector backend, run for real in qdrant-client's local mode (a folder).

SQLite stays authoritative: the collection follows every write (from this process or
another), is rebuilt when missing or of the wrong width, and an unreachable server leaves
search working on SQLite with a note saying so.
"""

import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from qdrant_client import QdrantClient, models

from contextd.app import App, open_app
from contextd.config import load_settings
from contextd.errors import ConfigError
from contextd.models import Kind, MemoryBody, Project, Reach, RecordDraft, RecordEdit, SearchQuery
from contextd.retrieval.qdrant_index import QdrantVectorIndex
from tests.conftest import Cli

TOPICS = (
    "The billing service rounds invoices to two decimals before storing them",
    "Deploys go out through the blue green pipeline on weekday mornings",
    "Redis was replaced by PostgreSQL for the job queue after lost jobs",
    "The auth middleware validates session cookies against the token table",
    "Schema migrations run in one transaction each, numbered by file name",
)
COLLECTION = "contextd"


def _configure(home: Path, vectors: str) -> None:
    text = f'[embeddings]\nprovider = "hashing"\n\n[vectors]\n{vectors}\n'
    (home / "config.toml").write_text(text, encoding="utf-8")


@contextmanager
def _app(home: Path, repo: Path, vectors: str) -> Iterator[App]:
    _configure(home, vectors)
    with open_app(load_settings(cwd=repo)) as opened:
        yield opened


def _local(home: Path) -> str:
    return f'backend = "qdrant"\npath = "{home / "qdrant"}"'


def _store(app: App, title: str, project: Project | None = None) -> str:
    where = project or app.current_project()
    draft = RecordDraft(Kind.MEMORY, title, MemoryBody(), category="note")
    return app.writer.create(draft, where, force=True).id


def _ids(app: App, text: str) -> list[str]:
    result = app.search.search(app.current_project(), SearchQuery(text=text))
    return [h.record.id for h in result.hits]


def _points(home: Path) -> dict[str, str]:
    """record id -> project payload of every record point (the app must be closed)."""
    client = QdrantClient(path=str(home / "qdrant"))
    try:
        points, _ = client.scroll(COLLECTION, limit=1000, with_payload=True)
        return {
            p.payload["record"]: p.payload["project"]
            for p in points
            if p.payload and "record" in p.payload
        }
    finally:
        client.close()


def _semantic_only(app: App, text: str) -> list[str]:
    assert app.indexer is not None
    index = app.writer._index  # the backend in use
    assert isinstance(index, QdrantVectorIndex)
    vector = app.indexer.provider.embed_query(text)
    found = [rid for rid, _ in index.search(vector, Reach(app.current_project().id), 10)]
    assert index.note is None, index.note
    return found


def test_writes_updates_and_deletes_reach_the_collection(home: Path, repo: Path) -> None:
    with _app(home, repo, _local(home)) as app:
        ids = [_store(app, title) for title in TOPICS]
        assert _semantic_only(app, TOPICS[2])[0] == ids[2]
        app.writer.update(ids[0], RecordEdit(title="Kubernetes nodes drain before upgrades"))
        assert _semantic_only(app, "Kubernetes nodes drain before upgrades")[0] == ids[0]
        app.writer.delete(ids[1])
        assert ids[1] not in _semantic_only(app, TOPICS[1])
        project_id = app.current_project().id
    points = _points(home)
    assert set(points) == {ids[0], ids[2], ids[3], ids[4]}
    assert set(points.values()) == {project_id}


def test_qdrant_ranks_as_the_sqlite_index_does(home: Path, repo: Path) -> None:
    with _app(home, repo, 'backend = "sqlite"') as app:
        for title in TOPICS:
            _store(app, title)
        expected = {text: _ids(app, text) for text in ("job queue database", "cookie checks")}
    with _app(home, repo, _local(home)) as app:  # built from SQLite on first use
        for text, ids in expected.items():
            assert _ids(app, text) == ids


def test_another_projects_vectors_stay_out_of_a_projects_search(home: Path, repo: Path) -> None:
    with _app(home, repo, _local(home)) as app:
        other = app.projects.ensure("elsewhere")
        mine = _store(app, TOPICS[0])
        theirs = _store(app, TOPICS[0] + " in their service", other)
        found = _semantic_only(app, TOPICS[0])
        assert mine in found
        assert theirs not in found


def test_writes_made_without_qdrant_are_caught_up_later(home: Path, repo: Path) -> None:
    with _app(home, repo, _local(home)) as app:
        first = _store(app, TOPICS[0])
        _semantic_only(app, TOPICS[0])
    with _app(home, repo, 'backend = "sqlite"') as app:  # e.g. another process's config
        second = _store(app, TOPICS[3])
        app.writer.delete(first)
    with _app(home, repo, _local(home)) as app:
        found = _semantic_only(app, TOPICS[3])
        assert found[0] == second
        assert first not in found
    assert set(_points(home)) == {second}


@pytest.mark.parametrize("damage", ["dropped", "wrong width"])
def test_a_missing_or_wrong_width_collection_is_rebuilt_from_sqlite(
    home: Path, repo: Path, damage: str
) -> None:
    with _app(home, repo, _local(home)) as app:
        ids = [_store(app, title) for title in TOPICS]
        _semantic_only(app, TOPICS[0])
    client = QdrantClient(path=str(home / "qdrant"))
    client.delete_collection(COLLECTION)
    if damage == "wrong width":
        params = models.VectorParams(size=8, distance=models.Distance.COSINE)
        client.create_collection(COLLECTION, vectors_config=params)
    client.close()
    with _app(home, repo, _local(home)) as app:
        assert _semantic_only(app, TOPICS[4])[0] == ids[4]
    assert set(_points(home)) == set(ids)


def test_refresh_rebuilds_the_collection(home: Path, repo: Path, run: Cli) -> None:
    with _app(home, repo, _local(home)) as app:
        ids = [_store(app, title) for title in TOPICS[:3]]
    client = QdrantClient(path=str(home / "qdrant"))
    if client.collection_exists(COLLECTION):
        client.delete_collection(COLLECTION)
    client.close()
    result = run("refresh")
    assert result.exit_code == 0, result.output
    assert set(_points(home)) == set(ids)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_server_falls_back_to_sqlite_and_says_so(
    home: Path, repo: Path, run: Cli
) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    with _app(home, repo, f'backend = "qdrant"\nurl = "{url}"\ntimeout_s = 1.0') as app:
        ids = [_store(app, title) for title in TOPICS]  # writes never wait for Qdrant
        result = app.search.search(app.current_project(), SearchQuery(text=TOPICS[2]))
        assert result.hits[0].record.id == ids[2]
        assert result.degraded is not None
        assert "Qdrant" in result.degraded and url in result.degraded
        assert "SQLite" in result.degraded
    reply = run.json("search", "job queue database")
    assert ids[2] in [hit["id"] for hit in reply["results"]]
    assert "Qdrant" in reply["degraded"]
    refused = run("refresh", "--json")
    assert refused.exit_code != 0
    assert "Qdrant" in json.loads(refused.stdout)["error"]["message"]


def test_an_unknown_backend_is_refused_with_the_choices(home: Path, repo: Path) -> None:
    _configure(home, 'backend = "pinecone"')
    with pytest.raises(ConfigError, match="sqlite, qdrant"):
        load_settings(cwd=repo)


def test_a_group_record_is_found_in_qdrant_by_its_members_only(home: Path, repo: Path) -> None:
    with _app(home, repo, _local(home)) as app:
        member, outsider = app.current_project(), app.projects.ensure("outsider")
        group = app.groups.create("Shop")
        app.groups.add(group.slug, [member])
        draft = RecordDraft(Kind.MEMORY, TOPICS[2], MemoryBody(), category="note", group="shop")
        shared = app.writer.create(draft, member).id
        assert shared not in _semantic_only(app, TOPICS[2])  # its own reach: own and global
        assert app.indexer is not None
        index = app.writer._index
        assert isinstance(index, QdrantVectorIndex)
        vector = app.indexer.provider.embed_query(TOPICS[2])
        assert [rid for rid, _ in index.search(vector, Reach(member.id, group.id), 3)][0] == shared
        assert shared not in dict(index.search(vector, Reach(outsider.id), 10))
        assert index.note is None, index.note
        assert _ids(app, TOPICS[2])[0] == shared  # a member's search reaches it
    assert _points(home)[shared] == group.id
