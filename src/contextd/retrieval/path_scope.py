"""Which records concern a file: a constraint whose scope covers it, or text that names it."""

import posixpath

from contextd.storage import records as rows
from contextd.storage.connection import Connection
from contextd.storage.filters import RecordFilter

__all__ = ["records_naming"]


def records_naming(conn: Connection, path: str, scope: RecordFilter) -> set[str]:
    """Ids of records in `scope` about the project-relative `path`: constraints whose scope
    globs match it (as .gitignore lines do), and records whose text holds the path or the
    file's name."""
    from pathspec import GitIgnoreSpec  # only when a path is asked for

    clean = posixpath.normpath(path.strip()).lstrip("/")
    if clean in ("", "."):
        return set()
    needles = list(dict.fromkeys((clean, posixpath.basename(clean))))
    found = set()
    for record_id, named, globs in rows.naming(conn, needles, scope):
        if named or (globs and GitIgnoreSpec.from_lines(globs).match_file(clean)):
            found.add(record_id)
    return found
