"""Projects: attaching folders, detaching them, and finding the project a command is about."""

import re
import unicodedata
from pathlib import Path

from msgspec import Struct
from msgspec.structs import replace

from contextd.clock import now
from contextd.errors import InvalidInputError, NotFoundError, ProjectNotResolvedError
from contextd.ids import new_id
from contextd.models import Project
from contextd.storage import projects as rows
from contextd.storage.store import Database

__all__ = ["AttachOutcome", "DetachOutcome", "ProjectService", "slugify"]


class AttachOutcome(Struct, frozen=True):
    """The project a folder was attached to, and how."""

    project: Project
    path: str
    action: str  # "created" | "adopted" | "already attached"
    renamed_from: str | None = None  # its name before, when attaching again gave it a new one


class DetachOutcome(Struct, frozen=True):
    """What detaching unlinked, and how many records a purge deleted."""

    project: Project
    path: str | None  # the attached folder that held the given folder, if one did
    purged_records: int | None
    unlinked: tuple[str, ...] = ()  # every folder unlinked


_SLUG_CHARS = 56


def display_name(name: str) -> str:
    """A project name a person or an import gave, held to the rules of a stored name.

    Raises:
        ValidationError: it is empty, longer than 200 characters, more than one line, or
            holds a secret.
    """
    from contextd.core.writing.validation import checked_text  # only when a project is made

    return checked_text("name", name, label="project name", limit=200, one_line=True)


def _printable(name: str) -> str:
    """A folder's name as a project name: any character that would not print becomes '?'."""
    return "".join(c if c.isprintable() else "?" for c in name)


def slugify(name: str) -> str:
    """A lower-case, hyphenated, ASCII form of a project name."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")
    # Room left under ids.MAX_SLUG for the "-2", "-3"... that tell equal names apart.
    return slug[:_SLUG_CHARS].strip("-") or "project"


class ProjectService:
    """Attach, detach, list and resolve projects."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def attach(self, folder: Path, name: str | None = None) -> AttachOutcome:
        """Attach `folder` (its git root when inside git) to a project, creating one if needed.

        A project already known by the same normalised git remote is adopted, so a clone, a
        worktree or a project that arrived from another machine is not created twice; a folder
        without a remote adopts a project of its slug that has neither folder nor remote. A
        folder attached already takes `name` as its project's new display name.
        """
        if not folder.is_dir():
            raise InvalidInputError(f"{folder} is not a folder; give the project's folder.")
        from contextd import gitinfo  # (subprocess) only here: every hook resolves a project

        root = gitinfo.work_tree_root(folder) or folder
        path = str(root.resolve())
        url = gitinfo.remote_url(root)
        remote = gitinfo.normalise_remote(url) if url else None
        stamp = now()
        with self._db.transaction() as conn:
            attached = rows.project_for_path(conn, Path(path))
            display = display_name(name) if name else _printable(root.name)
            if attached and attached[0] == path:
                rows.touch_project(conn, attached[1], remote, stamp)
                before = self._get(attached[1]).name
                renamed = before if name and display != before else None
                if renamed is not None:
                    rows.rename_project(conn, attached[1], display, stamp)
                return AttachOutcome(self._get(attached[1]), path, "already attached", renamed)
            known = rows.find_by_remote(conn, remote) if remote else self._unplaced(display)
            if known:
                rows.add_path(conn, known.id, path, stamp)
                rows.touch_project(conn, known.id, remote, stamp)
                return AttachOutcome(self._get(known.id), path, "adopted")
            slug = self._free_slug(slugify(display))
            project = Project(new_id(), slug, display, remote, (path,), stamp, stamp)
            rows.insert_project(conn, project)
        return AttachOutcome(project, path, "created")

    def ensure(self, name: str) -> Project:
        """The project with this slug or name, created without a folder when there is none
        (for imports: such a project is adopted later by `attach` in its checkout)."""
        found = rows.find_by_slug_or_name(self._db.connection(), name)
        if found:
            return found[0]
        stamp = now()
        name = display_name(name)
        project = Project(new_id(), self._free_slug(slugify(name)), name, None, (), stamp, stamp)
        with self._db.transaction() as conn:
            rows.insert_project(conn, project)
        return project

    def detach(
        self, project: Project, folder: Path | None, *, purge: bool, every: bool = False
    ) -> DetachOutcome:
        """Unlink the project's attached folder that holds `folder`, or (with `every`) all of
        its folders; with `purge`, delete the project and its records on this machine only.

        Raises:
            InvalidInputError: no folder of the project holds `folder` and `every` is not set.
        """
        with self._db.transaction() as conn:
            path = None
            if folder is not None:
                attached = rows.project_for_path(conn, folder.resolve())
                if attached and attached[1] == project.id:
                    path = attached[0]
            if purge:
                count = rows.delete_project(conn, project.id)
                return DetachOutcome(project, path, count, project.paths)
            unlinked = project.paths if every else (path,) if path else ()
            if not unlinked:
                raise InvalidInputError(_no_folder_to_detach(project, folder))
            for attached_path in unlinked:
                rows.remove_path(conn, attached_path)
        return DetachOutcome(project, path, None, unlinked)

    def list_projects(self) -> list[Project]:
        return rows.list_projects(self._db.connection())

    def get(self, project_id: str) -> Project | None:
        return rows.get_project(self._db.connection(), project_id)

    def resolve(self, name: str | None, cwd: Path) -> Project:
        """The project a command is about: `name` when given, else the one attached at `cwd`.

        Raises:
            NotFoundError: `name` matches no project.
            ProjectNotResolvedError: no name and no attached folder holds `cwd`.
        """
        conn = self._db.connection()
        attached = rows.project_for_path(conn, cwd.resolve())
        if name:
            found = rows.find_by_slug_or_name(conn, name)
            if len(found) == 1:
                return _seen_from(found[0], attached)
            if found:
                slugs = ", ".join(p.slug for p in found)
                raise InvalidInputError(f"Project '{name}' matches {slugs}; use the slug.")
            known = ", ".join(p.slug for p in rows.list_projects(conn)) or "none yet"
            raise NotFoundError(f"No project named '{name}' (known: {known}).", actions=("attach",))
        if attached is None:
            raise ProjectNotResolvedError(
                f"No contextd project is attached at {cwd}.", actions=("attach", "name_project")
            )
        return _seen_from(self._get(attached[1]), attached)

    def _get(self, project_id: str) -> Project:
        project = rows.get_project(self._db.connection(), project_id)
        if project is None:  # only if another process purged it a moment ago
            raise NotFoundError(f"Project {project_id} no longer exists.")
        return project

    def _unplaced(self, name: str) -> Project | None:
        """A project without folder or remote of this slug (arrived by sync, or detached),
        which a folder without a remote adopts by name."""
        for project in rows.find_by_slug_or_name(self._db.connection(), slugify(name)):
            if project.slug == slugify(name) and not project.paths and not project.git_remote:
                return project
        return None

    def _free_slug(self, slug: str) -> str:
        return rows.free_slug(self._db.connection(), slug)


def _seen_from(project: Project, attached: tuple[str, str] | None) -> Project:
    """The project as seen from the attached folder holding the command, when it is one of
    the project's own (its checkout)."""
    if attached is None or attached[1] != project.id:
        return project
    return replace(project, checkout=attached[0])


def _no_folder_to_detach(project: Project, folder: Path | None) -> str:
    if not project.paths:
        return f"{project.name} has no folder attached on this machine; there is nothing to detach."
    where = f"{folder} is not inside" if folder is not None else "No folder given; name one of"
    return (
        f"{where} the folders of {project.name} ({', '.join(project.paths)}); give the one to "
        "unlink (`contextd detach PATH`), or --all to unlink every one."
    )
