"""What changed in a project's shared memory between two revisions: for reviewing a pull
request, the decisions added and superseded and the constraints changed, not file diffs."""

from pathlib import Path

from msgspec import Struct

from contextd.errors import InvalidInputError
from contextd.gitinfo import GitError, changed_paths, file_at, staged_paths
from contextd.models import Record, Status
from contextd.share.check import check_file
from contextd.share.format import FormatError, parse_record
from contextd.share.layout import records_folder
from contextd.share.policy import SharePolicy

__all__ = ["Change", "Refusal", "changes", "staged_refusals"]

_PREFIX = str(records_folder("")).lstrip("/")
_COMPARED = ("title", "body", "category", "tags", "retrieval_hints", "priority", "related_to")


class Change(Struct, frozen=True):
    """One record's change: `what` is added, removed, superseded, archived, restored or
    changed (with the fields that changed)."""

    what: str
    id: str
    kind: str
    title: str
    fields: tuple[str, ...] = ()
    superseded_by: str | None = None


class Refusal(Struct, frozen=True):
    path: str
    reason: str


def changes(checkout: Path, span: str | None) -> list[Change]:
    """The record changes of `span` ("A..B", or "A" for A against the work tree; by default
    HEAD against the work tree, uncommitted and untracked files included).

    Raises:
        InvalidInputError: the span names a revision git does not know.
    """
    since, _, until = (span or "HEAD").partition("..")
    try:
        paths = changed_paths(checkout, _PREFIX, since or "HEAD", until or None)
    except GitError as exc:
        raise InvalidInputError(f"git cannot compare {span or 'HEAD'}: {exc}.") from None
    found = []
    for status, path in sorted(paths, key=lambda p: p[1]):
        before = _record(file_at(checkout, since or "HEAD", path)) if status != "A" else None
        after = _record(file_at(checkout, until or None, path)) if status != "D" else None
        change = _change(before, after)
        if change is not None:
            found.append(change)
    return found


def staged_refusals(checkout: Path, policy: SharePolicy) -> list[Refusal]:
    """Record files in the index (what the next commit holds) that contextd would refuse to
    take in: a secret, a broken field, conflict markers. For a pre-commit check.

    Raises:
        InvalidInputError: this is not a git work tree.
    """
    try:
        paths = staged_paths(checkout, _PREFIX)
    except GitError as exc:
        raise InvalidInputError(f"git cannot list the staged files: {exc}.") from None
    refused = []
    for path in paths:
        data = file_at(checkout, "", path) or b""
        _, problem = check_file(Path(path).name, data, policy)
        if problem is not None:
            refused.append(Refusal(path, problem))
    return refused


def _record(data: bytes | None) -> Record | None:
    if data is None:
        return None
    try:
        return parse_record(data.decode("utf-8", "replace"))
    except FormatError:
        return None


def _change(before: Record | None, after: Record | None) -> Change | None:
    if after is None and before is None:
        return None
    if after is None:
        assert before is not None
        return Change("removed", before.id, str(before.kind), before.title)
    if before is None:
        return Change("added", after.id, str(after.kind), after.title)
    label = (str(after.kind), after.title)
    if after.status is not before.status:
        what = {
            Status.SUPERSEDED: "superseded",
            Status.ARCHIVED: "archived",
            Status.ACTIVE: "restored",
        }[after.status]
        return Change(what, after.id, *label, superseded_by=after.superseded_by)
    fields = tuple(name for name in _COMPARED if getattr(before, name) != getattr(after, name))
    return Change("changed", after.id, *label, fields=fields) if fields else None
