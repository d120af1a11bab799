"""The composition root: opens the store and wires the services from Settings.

Each service is built, and its module imported, on first use: a command loads only what it
touches. The prompt hook's full-text recall thereby never imports the write path (validation,
secrets, the duplicate guard), the embedding stack, agent files, the mirror or sync.
"""

import getpass
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct

from contextd.config import Settings
from contextd.embeddings import select_provider
from contextd.home_folder import make_private
from contextd.models import Project
from contextd.storage.dialect import acting_as
from contextd.storage.sqlite.database import SqliteDatabase, store_writable
from contextd.storage.store import Database

if TYPE_CHECKING:
    from contextd.agents.agent_files import AgentFileService
    from contextd.core.reading.history import RecordHistory
    from contextd.core.reading.pages import RecordPages
    from contextd.core.reading.reader import RecordReader
    from contextd.core.recall.capture import Capture
    from contextd.core.recall.compaction import HookState
    from contextd.core.recall.proposals import Extractor
    from contextd.core.recall.queries import SearchService
    from contextd.core.upkeep.code_staleness import CodeStaleness
    from contextd.core.upkeep.consolidation import Consolidation
    from contextd.core.upkeep.refresh import Refresher
    from contextd.core.upkeep.semantic_index import IndexService
    from contextd.core.upkeep.summaries import Summarizer
    from contextd.core.workspace.groups import GroupService
    from contextd.core.workspace.inventory import Inventory
    from contextd.core.workspace.projects import ProjectService
    from contextd.core.workspace.sessions import SessionService
    from contextd.core.workspace.status import StatusReport
    from contextd.core.workspace.tokens import TokenService
    from contextd.core.writing.agent_changes import AgentChanges
    from contextd.core.writing.duplicates import DuplicateGuard
    from contextd.core.writing.review import ReviewQueue
    from contextd.core.writing.undo import Undoing
    from contextd.core.writing.writer import RecordWriter
    from contextd.embeddings.base import EmbeddingProvider
    from contextd.mirror.service import MirrorService
    from contextd.retrieval.indexer import Indexer
    from contextd.retrieval.vector_index import VectorIndex
    from contextd.share.files import RepositoryFiles
    from contextd.share.service import ShareService
    from contextd.sync.remotes import RemoteService
    from contextd.sync.service import SyncService

__all__ = ["App", "can_write_store", "open_app", "scratch_settings"]


class App(Struct, dict=True):
    """Everything a command needs, wired once per process (or per MCP server)."""

    settings: Settings
    db: Database
    provider_note: str | None
    indexer: "Indexer | None"  # None: vectors are off, retrieval is full-text only
    vector_index: "VectorIndex | None"
    # Called when records arrive without vectors (a checkout's new files), as each surface
    # wires it: the daemon fills them on a thread of its own; a command or an in-process
    # server starts the daemon to do it, when config allows.
    vectors_wanted: Callable[[], None] | None = None
    # The developer this App works for when one process serves several (a token's, for
    # `contextd serve`); its requests run within storage's acting_as(acting) as well.
    acting: str = ""

    @property
    def developer(self) -> str:
        """Whose sessions and checkpoints are whose: the developer it acts for; else on a
        team server the login role (with `[store] developer` after a slash), in a home
        `[store] developer` ('' by default)."""
        return self.acting or self.db.developer or self.settings.developer

    def with_settings(self, settings: Settings) -> "App":
        """The same opened store and vectors, with `settings` (config.toml read again)."""
        return App(
            settings,
            self.db,
            self.provider_note,
            self.indexer,
            self.vector_index,
            self.vectors_wanted,
            acting=self.acting,
        )

    @property
    def home_owner(self) -> str | None:
        """Who owns a home's store, as a token names them: `[store] developer`, else the
        login name; None on a team server, where every developer is a login role."""
        if self.settings.on_server:
            return None
        try:
            return self.settings.developer or getpass.getuser()
        except (KeyError, OSError):  # a uid no name is known for
            return self.settings.developer or None

    def acting_for(self, developer: str) -> "App":
        """The same store, vectors and settings, working for `developer`: services of its
        own (each says whose sessions and checkpoints it reads), nothing opened twice."""
        return App(
            self.settings,
            self.db,
            self.provider_note,
            self.indexer,
            self.vector_index,
            self.vectors_wanted,
            acting=developer,
        )

    @contextmanager
    def acting_in_store(self) -> Iterator[None]:
        """Within the block, the store itself reads and writes as the developer this App
        acts for (whose sessions and personal records a statement may see). In a home's
        store a token acting for the home's owner reads and writes as the owner does."""
        if self._as_home_owner():
            yield
            return
        with acting_as(self.acting):
            yield

    @cached_property
    def projects(self) -> "ProjectService":
        from contextd.core.workspace.projects import ProjectService

        return ProjectService(self.db)

    @cached_property
    def groups(self) -> "GroupService":
        from contextd.core.workspace.groups import GroupService

        return GroupService(self.db)

    @cached_property
    def duplicates(self) -> "DuplicateGuard":
        from contextd.core.writing.duplicates import DuplicateGuard

        return DuplicateGuard(self.db, self.vector_index, self.settings.refresh)

    @cached_property
    def reader(self) -> "RecordReader":
        from contextd.core.reading.reader import RecordReader

        return RecordReader(self.db, self.developer)

    @cached_property
    def record_files(self) -> "RepositoryFiles":
        """The shared records' files in the repository, which every change keeps in step."""
        from contextd.share.files import RepositoryFiles
        from contextd.share.policy import SharePolicy

        return RepositoryFiles(self.settings.cwd, SharePolicy(self.settings.share.records))

    @cached_property
    def writer(self) -> "RecordWriter":
        from contextd.core.writing.writer import RecordWriter

        return RecordWriter(
            self.db,
            self.reader,
            self.indexer,
            self.vector_index,
            self.duplicates,
            self.record_files,
            developer=self.developer,
            review=self.settings.capture.review,
            group_of=lambda name, project: self.groups.target(name, project),
        )

    @cached_property
    def agent_changes(self) -> "AgentChanges":
        """Changes agents ask for (MCP): made, or held while review asks for it."""
        from contextd.core.writing.agent_changes import AgentChanges

        holds = self.settings.capture.review in ("agent", "all")
        return AgentChanges(self.reader, self.writer, self.review, holds=holds)

    @cached_property
    def undo(self) -> "Undoing":
        from contextd.core.writing.undo import Undoing

        return Undoing(self.db, self.reader, self.record_files)

    @cached_property
    def history(self) -> "RecordHistory":
        from contextd.core.reading.history import RecordHistory

        return RecordHistory(self.db, self.reader)

    @cached_property
    def shares(self) -> "ShareService":
        from contextd.share.policy import SharePolicy
        from contextd.share.service import ShareService

        return ShareService(self.db, self.settings.cwd, SharePolicy(self.settings.share.records))

    @cached_property
    def record_pages(self) -> "RecordPages":
        """Records a page at a time, for browsing (the web view)."""
        from contextd.core.reading.pages import RecordPages

        return RecordPages(self.db)

    @cached_property
    def search(self) -> "SearchService":
        from contextd.core.recall.queries import SearchService
        from contextd.retrieval.search import Retriever

        weights = self.settings.search
        semantic = None
        if self.indexer is not None and self.vector_index is not None:
            from contextd.retrieval.semantic import SemanticSearch

            semantic = SemanticSearch(self.db, self.indexer, self.vector_index, weights)
        return SearchService(Retriever(self.db, semantic, weights), self.settings.context)

    @cached_property
    def index(self) -> "IndexService":
        from contextd.core.upkeep.semantic_index import IndexService

        return IndexService(self.db, self.indexer, self.vector_index, self.provider_note)

    @cached_property
    def code_staleness(self) -> "CodeStaleness":
        from contextd.core.upkeep.code_staleness import CodeStaleness

        return CodeStaleness(self.db)

    @cached_property
    def consolidation(self) -> "Consolidation":
        from contextd.core.upkeep.consolidation import Consolidation

        provider = self.indexer.provider if self.indexer else None
        vectors = (provider.id, provider.dimensions) if provider else None
        return Consolidation(self.db, vectors, self.settings.refresh)

    @cached_property
    def refresher(self) -> "Refresher":
        from contextd.core.upkeep.refresh import Refresher

        retention = self.settings.sync.tombstone_retention_days
        return Refresher(self.db, self.index, self.consolidation, retention)

    @cached_property
    def summarizer(self) -> "Summarizer":
        """Refresh's summarizer over the configured chat endpoint.

        Raises:
            ConfigError: `refresh.summarizer` is "none" (the default).
        """
        from contextd.chat import ChatClient
        from contextd.core.upkeep.summaries import Summarizer
        from contextd.errors import ConfigError

        if self.settings.refresh.summarizer == "none":
            raise ConfigError(
                'No summarizer is configured: set refresh.summarizer to "openai" and name '
                "the chat endpoint's chat.model (and chat.api_base)."
            )
        return Summarizer(ChatClient(self.settings.chat), self.writer, self.projects.get)

    @cached_property
    def sessions(self) -> "SessionService":
        from contextd.core.workspace.sessions import SessionService

        return SessionService(self.db, self.developer)

    @cached_property
    def tokens(self) -> "TokenService":
        from contextd.core.workspace.tokens import TokenService

        return TokenService(self.db)

    @cached_property
    def hook_state(self) -> "HookState":
        from contextd.core.recall.compaction import HookState

        return HookState(self.db)

    @cached_property
    def review(self) -> "ReviewQueue":
        from contextd.core.writing.review import ReviewQueue

        return ReviewQueue(self.db, lambda: self.writer, self.developer, self._reviews_everyone)

    def _reviews_everyone(self) -> bool:
        """Whether this person reviews every developer's held drafts: a home's owner (on the
        CLI, in the web view, or through their own token), a team server's administrator."""
        if not self.settings.on_server:
            return self._as_home_owner()
        return not self.acting and self.tokens.administering()

    def _as_home_owner(self) -> bool:
        """Whether this App works as the home's owner: acting for no one, or for them."""
        return not self.acting or self.acting == self.home_owner

    @cached_property
    def capture(self) -> "Capture":
        from contextd.core.recall.capture import Capture

        return Capture(self.db, self.developer)

    @cached_property
    def extractor(self) -> "Extractor":
        """Capture's extractor over the chat endpoint `[capture]` names.

        Raises:
            ConfigError: `capture.extractor` is "none" (the default).
        """
        from msgspec.structs import replace

        from contextd.chat import ChatClient
        from contextd.core.recall.proposals import Extractor
        from contextd.errors import ConfigError

        capture = self.settings.capture
        if capture.extractor == "none":
            raise ConfigError(
                'No extractor is configured: set capture.extractor to "openai" and name the '
                "chat endpoint's capture.model (and capture.api_base)."
            )
        chat = replace(
            self.settings.chat,
            api_base=capture.api_base,
            model=capture.model,
            api_key_env=capture.api_key_env,
            timeout_s=capture.timeout_s,
        )
        cap = capture.max_transcript_kb * 1024
        return Extractor(
            self.db, ChatClient(chat), lambda: self.writer, self.review, cap, self.developer
        )

    @cached_property
    def agent_files(self) -> "AgentFileService":
        from contextd.agents.agent_files import AgentFileService

        return AgentFileService(
            self.db, self.writer, self.reader, self.settings.context.export_budget
        )

    @cached_property
    def mirror(self) -> "MirrorService":
        from contextd.mirror.service import MirrorService

        return MirrorService(self.db, self.writer, self.reader, self.projects, self.settings.home)

    @cached_property
    def sync(self) -> "SyncService":
        from contextd.sync.service import SyncService

        return SyncService(self.db, self.indexer, self.duplicates)

    @cached_property
    def remotes(self) -> "RemoteService":
        from contextd.sync.remotes import RemoteService

        return RemoteService(self.db, self.sync, self.settings.sync)

    def current_project(self) -> Project:
        """The project named by --project / $CONTEXTD_PROJECT, else the one attached here."""
        return self.project(self.settings.project, self.settings.cwd)

    def project(self, name: str | None, folder: Path) -> Project:
        """The project `name` names, else the one attached at `folder`, seen from the checkout
        holding `folder` (a surface brings that checkout's view of its team files up to date
        with `shares.take_in`)."""
        return self.projects.resolve(name, folder)

    def status(self, project: Project) -> "StatusReport":
        from contextd.core.workspace.status import project_status

        waiting = self.review.count(project)
        group = self.groups.of(project)
        return project_status(self.reader, self.index, project, self.settings.home, waiting, group)

    def inventory(self) -> "Inventory":
        """Every project's counts and activity, the global records, embeddings in use."""
        from contextd.core.workspace.inventory import survey

        return survey(self.db, self.index, self.settings.home)


def can_write_store(settings: Settings) -> bool:
    """Whether the store in the settings' home can be written (False on a read-only home);
    a team server is written whatever the home's permissions."""
    return settings.on_server or store_writable(settings.db_path)


@contextmanager
def open_app(
    settings: Settings,
    *,
    busy_timeout_ms: int | None = None,
    read_only: bool = False,
) -> Iterator[App]:
    """Open the store (the home's SQLite file, or the team server [store] url names) and
    yield the wired services; closes on exit.

    `busy_timeout_ms` shortens how long a write waits for another writer, and how long a
    server may take to connect and to answer each statement (hooks must not block an agent
    for the default 15 s).
    `read_only` opens an existing store without writing a byte of the home (or anything on
    the server); every write then fails with StoreError."""
    choice = select_provider(settings.embeddings, settings.model_home)
    if not read_only:
        _make_home_private(settings.home)
    db = _open_store(settings, busy_timeout_ms, read_only)
    index: VectorIndex | None = None
    try:
        provider = choice.provider
        indexer, index = _vectors(db, provider, settings) if provider else (None, None)
        yield App(settings, db, choice.note, indexer, index)
    finally:
        if index is not None:
            index.close()
        db.close()


@contextmanager
def scratch_settings(settings: Settings) -> Iterator[Settings]:
    """Settings for a throwaway store beside the user's (a temporary home; on a team server,
    a temporary schema there too), removed when the block ends."""
    import tempfile

    from msgspec.structs import replace

    with tempfile.TemporaryDirectory(prefix="contextd-scratch-") as scratch:
        local = replace(settings, home=Path(scratch), project=None, models_from=settings.model_home)
        if not settings.on_server:
            yield local
            return
        from contextd.storage.server import scratch_url

        timeout = settings.store.connect_timeout_s
        with scratch_url(settings.store.url, connect_timeout_s=timeout) as url:
            yield replace(local, store=replace(settings.store, url=url))


def _open_store(settings: Settings, busy_timeout_ms: int | None, read_only: bool) -> Database:
    if settings.on_server:
        from contextd.storage.server import open_server  # psycopg only for a team server

        timeout = settings.store.connect_timeout_s
        if busy_timeout_ms is None:
            return open_server(settings.store, connect_timeout_s=timeout, read_only=read_only)
        budget = busy_timeout_ms / 1000  # a hook's: connecting and every statement within it
        return open_server(
            settings.store,
            connect_timeout_s=min(timeout, budget),
            read_only=read_only,
            statement_timeout_s=budget,
        )
    if read_only:
        return SqliteDatabase.open_read_only(settings.db_path)
    if busy_timeout_ms is None:
        return SqliteDatabase.open(settings.db_path)
    return SqliteDatabase.open(settings.db_path, busy_timeout_ms=busy_timeout_ms)


def _make_home_private(home: Path) -> None:
    """The home 0700 and its files 0600: created so, or tightened with a note on stderr."""
    try:
        note = make_private(home)
    except OSError:
        return  # opening the store says what is wrong with the folder
    if note:
        sys.stderr.write(note + "\n")


def _vectors(
    db: Database, provider: "EmbeddingProvider", settings: Settings
) -> tuple["Indexer", "VectorIndex"]:
    """The indexer and the store's vector index (SQLite's numpy matrix, or the server's
    pgvector index), or Qdrant's in front of it when config asks."""
    from contextd.retrieval.indexer import Indexer  # only when vectors are on
    from contextd.retrieval.vector_index import SqliteVectorIndex

    indexer = Indexer(db, provider)
    if db.backend != "sqlite" and settings.vectors.backend != "qdrant":
        from contextd.retrieval.pgvector_index import PgvectorIndex

        return indexer, PgvectorIndex(db, provider.id, provider.dimensions)
    sqlite = SqliteVectorIndex(db, provider.id, provider.dimensions)
    if settings.vectors.backend != "qdrant":
        return indexer, sqlite
    from contextd.retrieval.qdrant_index import QdrantVectorIndex  # only when configured

    qdrant = QdrantVectorIndex(
        db, provider.id, provider.dimensions, settings.vectors, settings.home, sqlite
    )
    return indexer, qdrant
