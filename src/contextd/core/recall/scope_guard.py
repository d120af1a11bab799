"""Which constraints cover a file: their scope globs, matched the way .gitignore lines are."""

from pathlib import Path
from typing import TYPE_CHECKING

from contextd.models import ConstraintBody, Kind, Project, Record

if TYPE_CHECKING:  # only a type here: the prompt hook, importing this, skips the write path
    from contextd.core.reading.reader import RecordReader


__all__ = ["constraints_for_path", "relative_to_project"]


def relative_to_project(project: Project, path: Path) -> str | None:
    """`path` relative to the deepest attached folder of the project holding it, else None."""
    resolved = path.resolve()
    for folder in sorted(project.paths, key=len, reverse=True):
        try:
            return resolved.relative_to(Path(folder)).as_posix()
        except ValueError:
            continue
    return None


def constraints_for_path(records: "RecordReader", project: Project, path: Path) -> list[Record]:
    """Active constraints (the project's and global ones) whose scope matches `path`,
    absolute ones first."""
    from pathspec import GitIgnoreSpec  # here, not at import: the prompt hook never needs it

    relative = relative_to_project(project, path) or path.name
    covering = []
    for record in records.list_records(project, kinds=(Kind.CONSTRAINT,)):
        scope = record.body.scope if isinstance(record.body, ConstraintBody) else ()
        if scope and GitIgnoreSpec.from_lines(scope).match_file(relative):
            covering.append(record)
    order = {"absolute": 0, "strong": 1, "advisory": 2}
    return sorted(covering, key=lambda r: order.get(str(getattr(r.body, "hardness", "")), 3))
