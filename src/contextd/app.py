"""The composition root: builds the store and the core services from Settings.

The services few commands use (agent files, the mirror, sync) are built on first use, so a
hook or a `contextd search` does not import them.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from contextd.config import Settings
from contextd.core.compaction import HookState
from contextd.core.duplicates import DuplicateGuard
from contextd.core.index import IndexService
from contextd.core.inventory import Inventory, survey
from contextd.core.projects import ProjectService
from contextd.core.records import RecordService
from contextd.core.search import SearchService
from contextd.core.sessions import SessionService
from contextd.core.status import StatusReport, project_status
from contextd.embeddings import EmbeddingProvider, select_provider
from contextd.models import Project
from contextd.retrieval.indexer import Indexer
from contextd.retrieval.search import Retriever
from contextd.retrieval.vector_index import SqliteVectorIndex, VectorIndex
from contextd.storage.db import Database

if TYPE_CHECKING:
    from contextd.agents.agent_files import AgentFileService
    from contextd.mirror.service import MirrorService
    from contextd.sync.remotes import RemoteService
    from contextd.sync.service import SyncService

__all__ = ["App", "open_app"]


@dataclass
class App:
    """Everything a command needs, wired once per process (or per MCP server)."""

    settings: Settings
    db: Database
    provider_note: str | None
    indexer: Indexer | None
    projects: ProjectService
    records: RecordService
    search: SearchService
    index: IndexService
    sessions: SessionService
    hook_state: HookState

    @cached_property
    def agent_files(self) -> "AgentFileService":
        from contextd.agents.agent_files import AgentFileService

        return AgentFileService(self.db, self.records, self.settings.context.export_budget)

    @cached_property
    def mirror(self) -> "MirrorService":
        from contextd.mirror.service import MirrorService

        return MirrorService(self.db, self.records, self.projects, self.settings.home)

    @cached_property
    def sync(self) -> "SyncService":
        from contextd.sync.service import SyncService

        return SyncService(self.db, self.indexer)

    @cached_property
    def remotes(self) -> "RemoteService":
        from contextd.sync.remotes import RemoteService

        return RemoteService(self.db, self.sync)

    def current_project(self) -> Project:
        """The project named by --project / $CONTEXTD_PROJECT, else the one attached here."""
        return self.projects.resolve(self.settings.project, self.settings.cwd)

    def status(self, project: Project) -> StatusReport:
        return project_status(self.records, self.index, project, self.settings.home)

    def inventory(self) -> Inventory:
        """Every project's counts and activity, the global records, embeddings in use."""
        return survey(self.db, self.index, self.settings.home)


@contextmanager
def open_app(settings: Settings, *, busy_timeout_ms: int | None = None) -> Iterator[App]:
    """Open the store at the settings' home and yield the wired services; closes on exit.

    `busy_timeout_ms` shortens how long a write waits for another writer (hooks must not
    block an agent for the default 15 s)."""
    choice = select_provider(settings.embeddings)
    db = (
        Database.open(settings.db_path)
        if busy_timeout_ms is None
        else Database.open(settings.db_path, busy_timeout_ms=busy_timeout_ms)
    )
    index: VectorIndex | None = None
    try:
        provider = choice.provider
        indexer = Indexer(db, provider) if provider else None
        index = _vector_index(db, provider, settings) if provider else None
        retriever = Retriever(db, indexer, index, settings.search)
        guard = DuplicateGuard(db, index, settings.refresh)
        yield App(
            settings=settings,
            db=db,
            provider_note=choice.note,
            indexer=indexer,
            projects=ProjectService(db),
            records=RecordService(db, indexer, index, guard),
            search=SearchService(retriever, settings.context),
            index=IndexService(db, indexer, index, choice.note),
            sessions=SessionService(db),
            hook_state=HookState(db),
        )
    finally:
        if index is not None:
            index.close()
        db.close()


def _vector_index(db: Database, provider: EmbeddingProvider, settings: Settings) -> VectorIndex:
    """SQLite's index, or Qdrant's in front of it when config asks for it."""
    sqlite = SqliteVectorIndex(db, provider.id, provider.dimensions)
    if settings.vectors.backend != "qdrant":
        return sqlite
    from contextd.retrieval.qdrant_index import QdrantVectorIndex  # only when configured

    return QdrantVectorIndex(
        db, provider.id, provider.dimensions, settings.vectors, settings.home, sqlite
    )
