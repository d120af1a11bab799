"""A store with a supersession chain, a session with a checkpoint and a record holding HTML,
and the web view over it through Starlette's TestClient (in process, real core services)."""

from collections.abc import Callable, Iterator

import pytest
from msgspec import Struct
from starlette.testclient import TestClient

from contextd.app import App
from contextd.models import CheckpointBody, DecisionBody, Kind, MemoryBody, RecordDraft
from contextd.web.access import Access
from contextd.web.application import build_app
from tests.daemon.test_other_user import stranger  # noqa: F401 (a second local user, for test_limits)

PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"
SCRIPT_TITLE = "<script>window.pwned = 1</script> raw HTML in a title must stay text"


class Store(Struct):
    redis: str
    postgres: str
    nats: str
    script: str
    checkpoint: str


def decision(title: str, problem: str, why: str) -> RecordDraft:
    return RecordDraft(Kind.DECISION, title, DecisionBody(problem, why), tags=("queue",))


REDIS = decision(
    "Use Redis pub/sub for the task queue",
    "We need a task queue for the GPU workers that is simple to operate",
    "Redis is already deployed for caching, and pub/sub is the least new infrastructure we "
    "could choose",
)
POSTGRES = decision(
    "Use PostgreSQL SKIP LOCKED for the task queue",
    "Redis pub/sub dropped tasks whenever workers reconnected during a deploy",
    "Postgres is already deployed and SKIP LOCKED gives safe concurrent dequeue inside "
    "transactions we already trust",
)
NATS = decision(
    "Use NATS JetStream for the task queue",
    "Polling the Postgres queue added load and latency to the primary database at peak",
    "JetStream keeps durable consumers with acks and replay, so a reconnecting worker resumes "
    "where it stopped",
)


@pytest.fixture
def store(app: App) -> Store:
    project = app.current_project()
    redis = app.writer.create(REDIS, project)
    postgres = app.writer.create(POSTGRES, project, supersedes=[redis.id])
    nats = app.writer.create(NATS, project, supersedes=[postgres.id])
    script = app.writer.create(
        RecordDraft(Kind.MEMORY, SCRIPT_TITLE, MemoryBody(), category="gotcha"), project
    )
    app.sessions.start(project, "claude")
    checkpoint = app.writer.create(
        RecordDraft(
            Kind.CHECKPOINT,
            "Worker heartbeat completed",
            CheckpointBody(goal="Distributed GPU scheduling", next=("Lease-based allocation",)),
        ),
        project,
    )
    app.sessions.end_open(project, "heartbeat done")
    return Store(redis.id, postgres.id, nats.id, script.id, checkpoint.id)


@pytest.fixture
def make_client(app: App) -> Iterator[Callable[..., TestClient]]:
    """A client of the view; `authed` gives it the launch cookie, `write` enables changes."""
    made: list[TestClient] = []

    def make(*, write: bool = False, authed: bool = True) -> TestClient:
        access = Access(PORT, write=write)
        client = TestClient(build_app(app, access), base_url=BASE, follow_redirects=False)
        if authed:
            client.cookies.set(access.cookie_name, access.token)
        client.access = access  # type: ignore[attr-defined]
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


@pytest.fixture
def client(make_client: Callable[..., TestClient], store: Store) -> TestClient:
    return make_client()


@pytest.fixture
def writer(make_client: Callable[..., TestClient], store: Store) -> TestClient:
    return make_client(write=True)
