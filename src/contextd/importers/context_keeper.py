"""context-keeper's store (`.context/decisions.json`, `constraints.json`, `pipelines.json`) read
into source entries: every documented field mapped to a record field, ids like `dec-001` kept
as the source ids that links and supersessions name."""

import re
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import msgspec
from msgspec import Struct

from contextd.credentials.scan import find_secrets
from contextd.errors import InvalidInputError
from contextd.importers.entry import SourceEntry, SourceStatus, source_instant
from contextd.importers.files import MAX_ENTRIES, read_bounded, source_folder
from contextd.models import (
    ConstraintBody,
    DecisionBody,
    Hardness,
    Kind,
    Origin,
    PipelineBody,
    RecordDraft,
)

__all__ = ["FILES", "read_context_keeper", "store_folder"]

FILES = ("decisions.json", "constraints.json", "pipelines.json")
_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
# Scopes that name a domain rather than a path: they cover no file.
_DOMAIN_SCOPES = frozenset({"", "global", "all", "*"})
_HARDNESS = {
    "absolute": Hardness.ABSOLUTE,
    "strong": Hardness.STRONG,
    "advisory": Hardness.ADVISORY,
}

Text = str | None
Texts = list[str] | None


class _Entry(Struct):
    """The fields every kind of entry has; anything else in the file is ignored."""

    id: str
    related_to: Texts = None
    tags: Texts = None
    retrieval_hints: Texts = None
    status: Text = None
    superseded_by: Text = None
    deprecated_reason: Text = None
    created_at: Text = None
    updated_at: Text = None
    verified_at: Text = None


class _Alternative(Struct):
    option: Text = None
    reason_rejected: Text = None


class _Decision(_Entry):
    summary: Text = None
    problem: Text = None
    why_chosen: Text = None
    rationale: Text = None  # before v0.4 the only reasoning field; why_chosen's fallback
    what_we_tried: Text = None
    tradeoffs: Text = None
    alternatives: list[str | _Alternative] | None = None
    constraints_created: Texts = None


class _Constraint(_Entry):
    rule: Text = None
    reason: Text = None
    triggering_incident: Text = None
    enforced_by: Text = None
    scope: str | list[str] | None = None
    hardness: Text = None


class _Step(Struct):
    order: int | float | None = None
    action: Text = None
    output: Text = None


class _Pipeline(_Entry):
    name: Text = None
    purpose: Text = None
    when_to_invoke: Text = None
    steps: list[str | _Step] | None = None
    constraints: Texts = None


E = TypeVar("E", bound=_Entry)


def store_folder(folder: Path) -> Path:
    """The `.context/` folder `folder` names: the project holding it, or the folder itself.

    Raises:
        InvalidInputError: there is no folder there, or no context-keeper file in it.
    """
    source_folder(folder, "a project holding .context/ (or the .context folder)")
    for candidate in (folder / ".context", folder):
        if any((candidate / name).is_file() for name in FILES):
            return candidate
    raise InvalidInputError(
        f"No context-keeper store in {folder}: it has no .context/ with decisions.json, "
        "constraints.json or pipelines.json."
    )


def read_context_keeper(folder: Path) -> list[SourceEntry]:
    """Every entry of the context-keeper store at `folder`, decisions first.

    Raises:
        InvalidInputError: a file is unreadable, too big, not JSON, or holds a value of the
            wrong type or an unknown status or hardness; two entries share an id.
    """
    store = store_folder(folder)
    entries: list[SourceEntry] = []
    readers: tuple[tuple[str, type[_Entry], Callable[..., SourceEntry]], ...] = (
        ("decisions.json", _Decision, _decision),
        ("constraints.json", _Constraint, _constraint),
        ("pipelines.json", _Pipeline, _pipeline),
    )
    for name, shape, convert in readers:
        path = store / name
        if path.is_file():
            entries += [convert(raw, name) for raw in _decode(path, shape)]
    _refuse_repeated_ids(entries)
    if len(entries) > MAX_ENTRIES:
        raise InvalidInputError(
            f"{store} holds {len(entries)} entries; one import takes at most {MAX_ENTRIES}."
        )
    return entries


def _decode(path: Path, shape: type[E]) -> list[E]:
    text = read_bounded(path)
    try:
        return msgspec.json.decode(text, type=list[shape])  # type: ignore[valid-type]
    except msgspec.ValidationError as exc:
        raise InvalidInputError(
            f"{path} does not hold context-keeper entries as they are written ({exc}); fix "
            "that entry or restore the file, then run the import again."
        ) from None
    except (msgspec.DecodeError, RecursionError) as exc:
        raise InvalidInputError(
            f"{path} is not valid JSON ({exc}); fix it or restore it, then run the import again."
        ) from None


def _decision(raw: _Decision, name: str) -> SourceEntry:
    body = DecisionBody(
        problem=_text(raw.problem),
        why_chosen=_text(raw.why_chosen) or _text(raw.rationale),
        alternatives=_alternatives(raw.alternatives or []),
        what_we_tried=_text(raw.what_we_tried),
        tradeoffs=_joined(
            _text(raw.tradeoffs), _sentence("Constraints it created", raw.constraints_created)
        ),
    )
    return _entry(raw, name, Kind.DECISION, _text(raw.summary), body)


def _constraint(raw: _Constraint, name: str) -> SourceEntry:
    where = _label(raw, name)
    hardness = _HARDNESS.get(_text(raw.hardness).lower() or "absolute")
    if hardness is None:
        raise InvalidInputError(
            f"{where}: hardness must be absolute, strong or advisory; fix it in the source, "
            "then run the import again."
        )
    scopes = [raw.scope] if isinstance(raw.scope, str) else raw.scope or []
    body = ConstraintBody(
        reason=_joined(_text(raw.reason), _sentence("Enforced by", [_text(raw.enforced_by)])),
        hardness=hardness,
        scope=tuple(glob for glob in map(_scope_glob, scopes) if glob),
        triggering_incident=_text(raw.triggering_incident),
    )
    return _entry(raw, name, Kind.CONSTRAINT, _text(raw.rule), body)


def _pipeline(raw: _Pipeline, name: str) -> SourceEntry:
    purpose = _joined(
        _text(raw.purpose),
        _sentence("When to run it", [_text(raw.when_to_invoke)]),
        _sentence("Rules for it", raw.constraints),
    )
    body = PipelineBody(purpose=purpose, steps=_steps(raw.steps or []))
    return _entry(raw, name, Kind.PIPELINE, _text(raw.name), body)


def _entry(
    raw: _Entry,
    name: str,
    kind: Kind,
    title: str,
    body: DecisionBody | ConstraintBody | PipelineBody,
) -> SourceEntry:
    where = _label(raw, name)
    status, successor = _lifecycle(raw, where)
    draft = RecordDraft(
        kind=kind,
        title=title,
        body=body,
        tags=tuple(raw.tags or ()),
        retrieval_hints=tuple(raw.retrieval_hints or ()),
        origin=Origin.IMPORT,
        created_at=source_instant(raw.created_at, where, "created_at"),
    )
    return SourceEntry(
        source_id=raw.id,
        where=name,
        draft=draft,
        status=status,
        successor=successor,
        related=tuple(_text(link) for link in raw.related_to or () if _text(link)),
        verified_at=source_instant(raw.verified_at, where, "verified_at"),
        updated_at=source_instant(raw.updated_at, where, "updated_at"),
        archived_reason=_text(raw.deprecated_reason) or None,
    )


def _lifecycle(raw: _Entry, where: str) -> tuple[SourceStatus, str | None]:
    """`superseded` (0.15 on: replaced through `supersedes`) is history; `deprecated` is
    retired, with the entry it was merged into or replaced by when one is named."""
    status = _text(raw.status).lower() or "active"
    successor = _text(raw.superseded_by) or None
    if status == "active":
        return SourceStatus.ACTIVE, None
    if status == "superseded":
        return SourceStatus.SUPERSEDED, successor
    if status == "deprecated":
        return SourceStatus.ARCHIVED, successor
    raise InvalidInputError(
        f"{where}: status must be active, superseded or deprecated; fix it in the source, "
        "then run the import again."
    )


def _alternatives(items: list[str | _Alternative]) -> str:
    lines = []
    for item in items:
        if isinstance(item, str):
            option, rejected = item.strip(), ""
        else:
            option, rejected = _text(item.option), _text(item.reason_rejected)
        if option and rejected:
            lines.append(f"- {option} (rejected: {rejected})")
        elif option or rejected:
            lines.append(f"- {option or rejected}")
    return "\n".join(lines)


def _steps(items: list[str | _Step]) -> tuple[str, ...]:
    """The steps' texts in their `order` (file order where it is missing or repeated)."""
    keyed: list[tuple[float, int, str]] = []
    for index, item in enumerate(items):
        if isinstance(item, str):
            keyed.append((float(index), index, item.strip()))
            continue
        action, output = _text(item.action), _text(item.output)
        text = f"{action} (produces: {output})" if action and output else action or output
        order = float(item.order) if item.order is not None else float(index)
        keyed.append((order, index, text))
    return tuple(text for _, _, text in sorted(keyed) if text)


def _scope_glob(scope: str) -> str:
    """context-keeper's scope as a .gitignore-style glob: a path whose last part has a dot is a
    file matched at any depth, anything else a folder matched at any depth with all it holds;
    `global` covers no file."""
    path = scope.replace("\\", "/").strip().strip("/")
    if path.lower() in _DOMAIN_SCOPES:
        return ""
    parts = [part for part in path.split("/") if part and part != "."]
    if not parts:
        return ""
    joined = "/".join(parts)
    prefix = "**/" if len(parts) > 1 else ""
    return f"{prefix}{joined}" if "." in parts[-1] else f"{prefix}{joined}/"


def _sentence(label: str, items: list[str] | None) -> str:
    texts = [t.strip().rstrip(".") for t in items or () if t and t.strip()]
    return f"{label}: {'; '.join(texts)}." if texts else ""


def _joined(*parts: str) -> str:
    """Texts as one field, a line each; each but the last ends like a sentence."""
    texts = [p.strip() for p in parts if p and p.strip()]
    ended = [t if t[-1] in ".!?:;)" else f"{t}." for t in texts[:-1]]
    return "\n".join([*ended, *texts[-1:]])


def _text(value: str | None) -> str:
    return (value or "").strip()


def _label(raw: _Entry, name: str) -> str:
    """How messages name an entry: its file and id."""
    if not _ID.match(raw.id) or find_secrets(raw.id):
        raise InvalidInputError(
            f"{name} has an entry whose id is not a context-keeper id (like dec-001); fix it, "
            "then run the import again."
        )
    return f"{name}, {raw.id}"


def _refuse_repeated_ids(entries: list[SourceEntry]) -> None:
    seen: dict[str, str] = {}
    for entry in entries:
        if entry.source_id in seen:
            raise InvalidInputError(
                f"Two entries are called {entry.source_id} (in {seen[entry.source_id]} and "
                f"{entry.where}); give one of them a new id, then run the import again."
            )
        seen[entry.source_id] = entry.where
