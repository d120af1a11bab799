"""Which project an MCP tool call is about, and how that was decided.

In order: the call's own `project` argument (a name or a folder); --project or
$CONTEXTD_PROJECT of the server; the project folder the agent names in the server's
environment (Claude Code sets CLAUDE_PROJECT_DIR); the client's roots (asked for within the
call, so it works on every protocol version, 2026-07-28 included, where a server cannot ask
before the first call); the server's working folder. The first that names an attached
project wins; `session_info` reports which one it was.
"""

from pathlib import Path
from typing import Annotated
from urllib.parse import urlparse
from urllib.request import url2pathname

from mcp.types import ListRootsResult
from msgspec import Struct
from pydantic import Field

from contextd.app import App
from contextd.errors import ContextdError, ProjectNotResolvedError
from contextd.models import Project

__all__ = [
    "NOWHERE",
    "Chooser",
    "Place",
    "ProjectArg",
    "ServerPlace",
    "project_line",
    "root_paths",
]

ProjectArg = Annotated[
    str | None,
    Field(
        description="A project name or folder; leave it out for the folder you work in "
        "(give it if the client does not say where that is)."
    ),
]


class ServerPlace(Struct, frozen=True):
    """Where the server runs, as the agent started it: its folder, the project named for it
    (--project or $CONTEXTD_PROJECT), the agent's project folders (CLAUDE_PROJECT_DIR...).
    An in-process server reads these from its own process (the app's settings); a session the
    daemon hosts gets them from the relay the agent started."""

    cwd: Path
    project: str | None = None
    agent_dirs: tuple[str, ...] = ()

    @classmethod
    def of(cls, app: App) -> "ServerPlace":
        settings = app.settings
        return cls(settings.cwd, settings.project, settings.agent_dirs)


class Choice(Struct, frozen=True):
    project: Project
    source: str  # how it was chosen, for session_info


class Place:
    """What a tool call resolved: the project and how, or why there is none."""

    def __init__(self, choice: Choice | None, problem: str = "") -> None:
        self.choice = choice
        self.problem = problem

    def project(self) -> Project:
        """The project of the call.

        Raises:
            ProjectNotResolvedError: nothing named an attached project (the text says what
                to do).
        """
        if self.choice is None:
            raise ProjectNotResolvedError(self.problem)
        return self.choice.project


NOWHERE = Place(None, "No project was resolved for this call.")


def project_line(place: Place) -> dict[str, str]:
    """The project a call resolved and how, for session_info."""
    choice = place.choice
    if choice is None:
        return {}
    return {"project": choice.project.slug, "project_from": choice.source}


def root_paths(listed: ListRootsResult) -> list[Path]:
    """The local folders among a client's roots."""
    return [
        Path(url2pathname(urlparse(str(root.uri)).path))
        for root in listed.roots
        if str(root.uri).startswith("file:")
    ]


class Chooser:
    """Resolves projects for one connection; remembers the client's roots once listed."""

    def __init__(self, app: App, where: ServerPlace | None = None) -> None:
        self.app = app
        self.where = where or ServerPlace.of(app)
        self.roots: ListRootsResult | None = None  # None: not listed yet (or changed since)
        self.last: Choice | None = None

    def fixed(self, name: str | None) -> Choice | None:
        """The project named by the call, the server's settings or the agent's environment."""
        where = self.where
        if name:
            return Choice(self._named(name), "the call's project argument")
        if where.project:
            return Choice(self._named(where.project), "--project / $CONTEXTD_PROJECT")
        for folder in where.agent_dirs:
            found = self._at(Path(folder))
            if found is not None:
                return Choice(found, f"the agent's project folder {folder}")
        return None

    def place(self, name: str | None, roots: ListRootsResult | None) -> Place:
        """Where a call works; never raises (a problem is kept for the tool to report)."""
        if roots is not None:
            self.roots = roots
        try:
            choice = self.fixed(name) or self._from_roots(roots) or self._from_cwd()
        except ContextdError as exc:
            return Place(None, str(exc))
        self.last = choice
        return Place(choice)

    def _from_roots(self, roots: ListRootsResult | None) -> Choice | None:
        for folder in root_paths(roots) if roots is not None else ():
            found = self._at(folder)
            if found is not None:
                return Choice(found, f"the client's root {folder}")
        return None

    def _from_cwd(self) -> Choice:
        cwd = self.where.cwd
        try:
            return Choice(self._seen(None, cwd), f"the server's folder {cwd}")
        except ProjectNotResolvedError:
            raise ProjectNotResolvedError(
                f"No contextd project is attached at {cwd}, where this server runs, and the "
                "client named no attached folder; pass `project` (a project name or folder) "
                "to the tool, or run `contextd attach` in the project's folder."
            ) from None

    def _named(self, name: str) -> Project:
        if Path(name).is_absolute():
            found = self._at(Path(name))
            if found is None:
                raise ProjectNotResolvedError(
                    f"No contextd project is attached at {name}; give another folder or a "
                    "project name, or run `contextd attach` there."
                )
            return found
        return self._seen(name, self.where.cwd)

    def _at(self, folder: Path) -> Project | None:
        try:
            return self._seen(None, folder)
        except ContextdError:
            return None

    def _seen(self, name: str | None, folder: Path) -> Project:
        """The project, its checkout's view of its team files brought up to date."""
        project = self.app.project(name, folder)
        self.app.shares.take_in(project, self.app.vectors_wanted)
        return project
