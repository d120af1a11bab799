"""Shared memory of a project: turning it on, keeping a checkout's view current, and saying
which files were kept out."""

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct

from contextd.core.workspace.textfiles import write_text_atomic
from contextd.errors import InvalidInputError
from contextd.models import Project
from contextd.share.layout import FOLDER, folder_problem, records_folder, shared_checkout
from contextd.share.policy import SharePolicy
from contextd.storage import records as record_rows
from contextd.storage import shared as rows
from contextd.storage.store import Database

if TYPE_CHECKING:  # the ingest, the writer and git history load only when they are needed
    from contextd.share.history import Change, Refusal
    from contextd.share.ingest import Taken

__all__ = ["Problem", "ShareService", "Shared", "SharedView"]

README = """# Shared project memory (contextd)

Each file in `records/` is one record of this project's memory: a decision with its
rationale, a constraint with its scope, a workflow, a convention or a gotcha. contextd writes
them when someone records one in this repository and reads them back into each developer's
local index, so the memory travels with the code, follows branches and is reviewed in pull
requests like the code it explains.

Edit a file by hand if you like (contextd checks it before taking it in), or use
`contextd update` / `supersede` / `archive`. Never put a secret in one: contextd refuses the
file, and `contextd setup --git-hooks` installs a pre-commit check that refuses it too.
"""


class Shared(Struct, frozen=True):
    """What `contextd share` did: the folder, and how many records it wrote there."""

    folder: str
    written: int
    created: bool


class Problem(Struct, frozen=True):
    """A record file kept out of the store, and why."""

    path: str
    reason: str


class SharedView(Struct, frozen=True):
    """A shared checkout as a person checks it: its folder, the records its files hold, and
    the files kept out with the fix for each."""

    folder: str
    records: int
    problems: list[Problem]


class ShareService:
    def __init__(self, db: Database, cwd: Path, policy: SharePolicy) -> None:
        self._db = db
        self._cwd = cwd
        self._policy = policy

    def share(self, project: Project) -> Shared:
        """Turn shared memory on for the checkout the project is seen from: create
        `.contextd/` there and write every record the settings share.

        Raises:
            InvalidInputError: the command does not run inside one of the project's folders.
        """
        from contextd.share.files import refuse_unsafe, write

        checkout = self._checkout(project, "share")
        refuse_unsafe(checkout)
        folder = records_folder(checkout)
        created = not folder.is_dir()
        folder.mkdir(parents=True, exist_ok=True)
        readme = Path(checkout) / FOLDER / "README.md"
        if not os.path.lexists(readme):
            write_text_atomic(readme, README)
        written = 0
        with self._db.transaction() as conn:
            for record_id in rows.local_records(conn, project.id):
                record = record_rows.get_record(conn, record_id)
                if record is not None and self._policy.allows(record):
                    write(conn, checkout, record)
                    written += 1
        return Shared(str(folder.parent), written, created)

    def log(self, project: Project, span: str | None) -> list["Change"]:
        """The shared memory's changes over `span` in the checkout the project is seen from.

        Raises:
            InvalidInputError: not inside a checkout of the project, or an unknown revision.
        """
        from contextd.share.history import changes

        return changes(Path(self._checkout(project, "log")), span)

    def check_staged(self, project: Project) -> list["Refusal"]:
        """Staged record files that would be refused (for a pre-commit check)."""
        from contextd.share.history import staged_refusals

        return staged_refusals(Path(self._checkout(project, "share --check")), self._policy)

    def _checkout(self, project: Project, command: str) -> str:
        if project.checkout is None:
            raise InvalidInputError(
                f"Run `contextd {command}` inside a folder of {project.name} (an attached git "
                "work tree)."
            )
        return project.checkout

    def take_in(
        self, project: Project, vectors_wanted: Callable[[], None] | None = None
    ) -> "Taken | None":
        """Bring the view of the checkout the project is seen from up to date with its team
        files; None when nothing changed (a checkout that stopped sharing loses its view).
        `vectors_wanted` is called when records arrived that have no vector yet."""
        checkout = project.checkout
        if checkout is None or self._db.read_only:
            return None
        if not shared_checkout(checkout) and not rows.has_files(self._db.connection(), checkout):
            return None  # most projects are not shared: nothing more is loaded for them
        from contextd.share.ingest import changed_files, take_in

        scan = changed_files(self._db.connection(), checkout)
        if not scan.changed and not scan.gone:
            return None
        taken = take_in(self._db, project, checkout, scan, self._policy)
        if taken.added + taken.changed and vectors_wanted is not None:
            vectors_wanted()
        return taken

    def view(self, project: Project) -> SharedView | None:
        """The shared checkout the project is seen from; None when it is not one."""
        checkout = project.checkout
        if checkout is None or not shared_checkout(checkout):
            return None
        conn = self._db.connection()
        files = rows.files_of(conn, checkout)
        unsafe = folder_problem(checkout)
        problems = [Problem(str(Path(checkout) / FOLDER), unsafe)] if unsafe else []
        problems += [
            Problem(str(records_folder(checkout) / name), row.problem)
            for name, row in sorted(files.items())
            if row.problem is not None
        ]
        held = sum(1 for row in files.values() if row.record_id is not None)
        return SharedView(str(Path(checkout) / FOLDER), held, problems)
