"""Taking a checkout's record files into the store, incrementally.

The files are the team's truth; the store is their index. A scan compares each file's size
and change time with what was last read (no file is opened when nothing changed), reads what
changed, and takes in a record only when it passes the rules a CLI write passes (fields,
sizes, secrets, its id, dates) and belongs to no other project; a file that does not is kept
out and its problem noted, so the briefing, `status` and `sync` can name it with the fix.
A file gone from the checkout leaves that checkout's view; the record stays for others.
"""

import os

from msgspec import Struct
from msgspec.structs import replace

from contextd.models import Project, Record
from contextd.provenance import FROM_FILES, changes_via
from contextd.share.layout import digest_of, folder_problem, read_file, records_folder
from contextd.share.policy import SharePolicy
from contextd.storage import records as record_rows
from contextd.storage import shared as rows
from contextd.storage import vectors as vector_rows
from contextd.storage.connection import Connection
from contextd.storage.shared import sharing_of
from contextd.storage.store import Database

__all__ = ["Scan", "Taken", "changed_files", "take_in"]


class Scan(Struct, frozen=True):
    """What changed in a checkout's record folder since it was last read."""

    changed: tuple[str, ...]  # file names, new or changed
    gone: tuple[str, ...]


class Taken(Struct, frozen=True):
    """What one pass took in: records added or changed, files gone, files refused."""

    added: int = 0
    changed: int = 0
    gone: int = 0
    refused: int = 0


def changed_files(conn: Connection, checkout: str) -> Scan:
    """The record files of `checkout` whose size or change time differ from the last read."""
    known = rows.files_of(conn, checkout)
    seen: dict[str, tuple[int, int]] = {}
    try:
        entries = [] if folder_problem(checkout) else list(os.scandir(records_folder(checkout)))
    except OSError:
        entries = []
    for entry in entries:
        if entry.name.endswith(".md") and not entry.is_dir(follow_symlinks=False):
            info = entry.stat(follow_symlinks=False)  # a link is read, to be refused by name
            seen[entry.name] = (info.st_size, info.st_mtime_ns)
    changed = tuple(
        sorted(
            name
            for name, stat in seen.items()
            if name not in known or (known[name].size, known[name].mtime_ns) != stat
        )
    )
    return Scan(changed, tuple(sorted(set(known) - set(seen))))


def take_in(
    db: Database, project: Project, checkout: str, scan: Scan, policy: SharePolicy
) -> Taken:
    """Read the changed files and update the store and the checkout's view, in one
    transaction."""
    folder = records_folder(checkout)
    read = [read_file(folder / name) for name in scan.changed]
    arriving = {name.removesuffix(".md") for name in scan.changed}
    added = changed = refused = 0
    with db.transaction() as conn:
        for name, (data, stat, problem) in zip(scan.changed, read, strict=True):
            digest = digest_of(data)
            known_id = name.removesuffix(".md")
            if problem is None and sharing_of(conn, known_id) == (rows.SHARED, digest):
                rid: str | None = known_id  # the row already holds what this file says
            else:
                record, problem = (
                    (None, problem)
                    if problem
                    else _record(conn, project, name, data, policy, arriving)
                )
                if record is not None:
                    outcome = _store(conn, record, digest)
                    added += outcome == "added"
                    changed += outcome == "changed"
                else:
                    refused += 1
                rid = record.id if record is not None else None
            rows.put_file(conn, checkout, rows.FileRow(name, *stat, digest, rid, problem))
        rows.drop_files(conn, checkout, list(scan.gone))
    return Taken(added, changed, len(scan.gone), refused)


def _record(
    conn: Connection,
    project: Project,
    name: str,
    data: bytes,
    policy: SharePolicy,
    arriving: set[str],
) -> tuple[Record | None, str | None]:
    """The file's record placed in `project`, or why it is refused: a file may create a
    shared record or change one, never take over a record of this store that is not shared
    (a private one, a checkpoint) or belongs elsewhere, whatever id it claims, nor name as its
    successor a record that neither the store nor the files `arriving` with it hold."""
    from contextd.share.check import check_file  # the rules load only when a file is new

    record, problem = check_file(name, data, policy)
    if record is None:
        return None, problem
    successor = record.superseded_by
    if successor and successor not in arriving and record_rows.get_record(conn, successor) is None:
        return None, f"it is superseded by {successor}, a record that exists nowhere here"
    stored = record_rows.get_record(conn, record.id)
    if stored is None:
        deleted_at = record_rows.tombstone_of(conn, record.id)
        if deleted_at is not None and deleted_at >= record.updated_at:  # as a bundle's would
            return None, (
                f"its record was deleted here on {deleted_at[:10]}, after this version of it; "
                f"`contextd restore {record.id}` brings it back"
            )
        return replace(record, project_id=project.id), None
    if stored.project_id != project.id:
        return None, "its id belongs to a record of another project"
    sharing, _ = sharing_of(conn, record.id)
    if sharing == rows.PRIVATE or not policy.allows(stored):
        return None, "its id names a record of this store that is not shared"
    if stored.kind is not record.kind:
        return None, f"its id names a {stored.kind}, and a file cannot change a record's kind"
    return replace(record, project_id=project.id, session_id=stored.session_id), None


def _store(conn: Connection, record: Record, digest: str) -> str:
    """Insert or replace the record's row as the file says; "added", "changed" or ""."""
    stored = record_rows.get_record(conn, record.id)
    if stored == record:
        rows.mark_shared(conn, record.id, digest)
        return ""
    if stored is None:
        with changes_via(FROM_FILES):
            record_rows.insert_record(conn, record)
        outcome = "added"
    else:
        with changes_via(FROM_FILES):
            record_rows.replace_record(conn, record)
        if _text_of(stored) != _text_of(record):
            vector_rows.delete_embedding(conn, record.id)  # embedded again from the new text
        outcome = "changed"
    rows.mark_shared(conn, record.id, digest)
    return outcome


def _text_of(record: Record) -> tuple[object, ...]:
    return (record.title, record.body, record.tags, record.retrieval_hints, record.category)
