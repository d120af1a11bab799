"""Where a checkout keeps its shared records, and writing them there as the store changes.

A write to a shared project writes the record's file, atomically, in the working tree the
command or agent runs in (committing is the developer's); the store then knows that checkout
holds it. Which records are shared is set by `[share] records` (kinds, and memory categories);
a record written with --private, and every global one, stays in the store only.
"""

from collections.abc import Sequence
from pathlib import Path

from contextd.core.workspace.textfiles import write_text_atomic
from contextd.errors import InvalidInputError
from contextd.models import Record
from contextd.share.format import render_record
from contextd.share.layout import digest_of, folder_problem, records_folder, shared_checkout
from contextd.share.policy import SharePolicy
from contextd.storage import projects as project_rows
from contextd.storage import shared as rows
from contextd.storage.connection import Connection

__all__ = ["RepositoryFiles", "file_name", "refuse_unsafe", "write"]


def file_name(record_id: str) -> str:
    return f"{record_id}.md"


class RepositoryFiles:
    """Writes shared records' files into the checkout the command runs in (see the module)."""

    def __init__(self, cwd: Path, policy: SharePolicy) -> None:
        self._cwd = cwd.resolve()
        self._policy = policy

    def written(
        self,
        conn: Connection,
        records: Sequence[Record],
        private: frozenset[str],
        checkout: str | None,
    ) -> None:
        for record in records:
            if record.project_id is None:
                continue
            sharing, _ = rows.sharing_of(conn, record.id)
            if record.id in private:
                rows.mark_private(conn, record.id)
                continue
            if sharing == rows.PRIVATE or (
                sharing == rows.LOCAL and not self._policy.allows(record)
            ):
                continue
            target = self.checkout_for(conn, record.project_id, checkout)
            if target is not None:
                write(conn, target, record)

    def removed(self, conn: Connection, record: Record) -> None:
        if record.project_id is None:
            return
        checkout = self.checkout_for(conn, record.project_id)
        if checkout is None:
            return
        path = records_folder(checkout) / file_name(record.id)
        if folder_problem(checkout) is None:  # never delete through a link
            path.unlink(missing_ok=True)
        rows.drop_files(conn, checkout, [path.name])

    def checkout_for(
        self, conn: Connection, project_id: str, asked_from: str | None = None
    ) -> str | None:
        """The shared checkout a write lands in: the one it was asked from, else the
        project's attached folder holding this command, else its only shared checkout; None
        when there is no such one."""
        if asked_from is not None and shared_checkout(asked_from):
            owner = project_rows.project_for_path(conn, Path(asked_from))
            if owner is not None and owner == (asked_from, project_id):
                return asked_from
        here = project_rows.project_for_path(conn, self._cwd)
        if here is not None and here[1] == project_id:
            return here[0] if shared_checkout(here[0]) else None
        shared = [
            path
            for path, owner in project_rows.list_paths(conn)
            if owner == project_id and shared_checkout(path)
        ]
        return shared[0] if len(shared) == 1 else None


def write(conn: Connection, checkout: str, record: Record) -> None:
    """Write `record`'s file in `checkout` and note that the checkout holds it.

    Raises:
        InvalidInputError: the checkout's shared folder is a link or not a folder (a write
            through it would land outside the repository), or cannot be written.
    """
    refuse_unsafe(checkout)
    text = render_record(record)
    path = records_folder(checkout) / file_name(record.id)
    write_text_atomic(path, text)
    info = path.stat()
    digest = digest_of(text.encode("utf-8"))
    rows.put_file(
        conn,
        checkout,
        rows.FileRow(path.name, info.st_size, info.st_mtime_ns, digest, record.id, None),
    )
    rows.mark_shared(conn, record.id, digest)


def refuse_unsafe(checkout: str) -> None:
    """Raises:
    InvalidInputError: the checkout's shared folders are not real folders inside it.
    """
    problem = folder_problem(checkout)
    if problem is not None:
        raise InvalidInputError(f"Nothing was written: {problem}.")
