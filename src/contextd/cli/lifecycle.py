"""update, supersede, archive, unarchive, delete, verify, stale: changing what is stored."""

from collections.abc import Callable
from typing import Any

import click

from contextd.cli._context import common_options, declared_options, get_app
from contextd.cli._output import emit, limit_option, more_note, record_row, report_write, table
from contextd.client.options import Option
from contextd.clock import age
from contextd.core.reading.views import code_change_view, record_view
from contextd.core.upkeep.quality import command_for, scan_quality
from contextd.fields import BODY_FIELDS, BodyField
from contextd.models import Record, RecordEdit
from contextd.text.grammar import counted
from contextd.text.printer import echo, style

__all__ = ["COMMANDS", "edit_from", "edit_options"]


def _body_options() -> tuple[Option, ...]:
    """One option per body field's flag; a flag two kinds share (--problem) is one option."""
    by_flag: dict[str, list[BodyField]] = {}
    for spec in BODY_FIELDS:
        by_flag.setdefault(spec.flag, []).append(spec)
    options = []
    for flag, specs in by_flag.items():
        first = specs[0]
        also = "".join(f" For a {s.kind}: {s.help[0].lower()}{s.help[1:]}" for s in specs[1:])
        many = " Replaces the list (repeatable)." if first.many else ""
        options.append(
            Option(
                flag,
                first.name,
                first.help + also + many,
                multiple=first.many,
                choices=first.choices,
                metavar=first.metavar,
            )
        )
    return tuple(options)


_BODY_OPTIONS = _body_options()
_LISTS = frozenset(o.dest for o in _BODY_OPTIONS if o.multiple)


def _written(record: Record, verb: str, *, with_similar: bool = False) -> None:
    app = get_app()
    similar = app.writer.similar(record) if with_similar else []
    shorts = app.reader.handles([record.id, *(s.record.id for s in similar)])
    report_write(verb, record, similar, shorts)


def edit_options(command: Callable[..., None]) -> Callable[..., None]:
    """The flags that change a record's fields (`update`, `review edit`), one per field."""
    for option in reversed(
        [
            click.option("--title", help="New title / text / summary / rule / name."),
            click.option("--category"),
            click.option("--tag", "tags", multiple=True, help="Replace the tags (repeatable)."),
            click.option(
                "--hint", "hints", multiple=True, help="Replace the retrieval hints (repeatable)."
            ),
            click.option("--priority", type=click.IntRange(1, 5)),
            click.option("--related", multiple=True, metavar="ID", help="Replace the related ids."),
            declared_options(*_BODY_OPTIONS),
        ]
    ):
        command = option(command)
    return command


def edit_from(values: dict[str, Any]) -> RecordEdit:
    """The change `edit_options` asked for (the values click passed, taken out of `values`)."""
    fields = {name: values.pop(name) for name in ("title", "category", "tags", "hints")}
    priority, related = values.pop("priority"), values.pop("related")
    body = {
        name: values.pop(name)
        for name in [o.dest for o in _BODY_OPTIONS]
        if (values[name] if name in _LISTS else values[name] is not None)
    }
    for option in _BODY_OPTIONS:
        values.pop(option.dest, None)
    return RecordEdit(
        title=fields["title"],
        category=fields["category"],
        tags=fields["tags"] or None,
        retrieval_hints=fields["hints"] or None,
        priority=priority,
        related_to=related or None,
        body=body,
    )


@click.command()
@click.argument("record_id", metavar="ID")
@edit_options
@click.option("--force", is_flag=True, help="Keep the change even if it restates another record.")
@common_options
def update(record_id: str, force: bool, **values: Any) -> None:
    """Change fields of a record; the same rules as when it was created apply."""
    edit = edit_from(values)
    _written(get_app().writer.update(record_id, edit, force=force), "Updated", with_similar=True)


@click.command()
@click.argument("old_id", metavar="OLD")
@click.option("--by", "new_id", required=True, metavar="NEW", help="The record that replaces it.")
@common_options
def supersede(old_id: str, new_id: str) -> None:
    """Mark OLD as replaced by NEW: OLD stays readable but leaves default retrieval."""
    app = get_app()
    old, new = app.writer.supersede(old_id, new_id)
    shorts = app.reader.handles([old.id, new.id])

    def human() -> None:
        echo(
            f"{shorts[old.id]} ({old.title}) is now NOT CURRENT; "
            f"current truth: {shorts[new.id]} ({new.title}); `contextd unsupersede "
            f"{shorts[old.id]}` undoes it"
        )

    emit({"superseded": record_view(old), "by": record_view(new)}, human)


@click.command()
@click.argument("record_id", metavar="ID")
@click.option("--reason", help="Why it no longer applies (kept with the record).")
@common_options
def archive(record_id: str, reason: str | None) -> None:
    """Take a record out of retrieval (reversible with unarchive)."""
    _written(get_app().writer.archive(record_id, reason), "Archived")


@click.command()
@click.argument("record_id", metavar="ID")
@common_options
def unarchive(record_id: str) -> None:
    """Bring an archived record back."""
    _written(get_app().writer.unarchive(record_id), "Restored")


@click.command()
@click.argument("record_id", metavar="ID")
@common_options
def delete(record_id: str) -> None:
    """Delete a record for good (a tombstone remembers the deletion)."""
    app = get_app()
    found = app.reader.get(record_id)
    short = app.reader.handles([found.id])[found.id]
    record = app.writer.delete(found.id)

    def human() -> None:
        echo(
            f"Deleted {record.kind} {short}: {record.title} (`contextd restore {short}` undoes it)"
        )

    emit({"deleted": record.id, "kind": str(record.kind), "title": record.title}, human)


@click.command()
@click.argument("record_id", metavar="ID")
@common_options
def verify(record_id: str) -> None:
    """Confirm a record is still true today."""
    _written(get_app().writer.verify(record_id), "Verified")


@click.command()
@click.option("--days", type=int, help="Not verified for this many days (default from config).")
@click.option(
    "--code", "code", is_flag=True, help="Records whose named code changed in git since verified."
)
@common_options
def stale(days: int | None, code: bool) -> None:
    """List active records not verified recently, or (--code) whose code changed since."""
    if code:
        _stale_code()
        return
    app = get_app()
    limit = app.settings.lifecycle.stale_days if days is None else days
    records = app.reader.stale(app.current_project(), limit)
    shorts = app.reader.handles([r.id for r in records])

    def human() -> None:
        if not records:
            echo(f"Nothing unverified for more than {counted(limit, 'day')}.")
            return
        table(
            [record_row(r, shorts[r.id], extra=f"verified {age(r.verified_at)}") for r in records]
        )
        echo(
            f"\n{len(records)} stale; `contextd verify ID` confirms one, "
            "`contextd archive ID` retires it."
        )

    emit({"days": limit, "records": [record_view(r) for r in records]}, human, long=True)


def _stale_code() -> None:
    app = get_app()
    project = app.current_project()
    check = app.code_staleness.check(project)
    found = app.code_staleness.stale(project)
    shorts = app.reader.handles([r.id for r, _ in found])

    def human() -> None:
        if check.repository is None:
            echo(f"{project.name} has no git work tree attached here; nothing to compare.")
            return
        if not found:
            echo("No record names code that changed since it was verified.")
            return
        for record, change in found:
            echo(f"{shorts[record.id]}  {record.title[:70]}")
            echo(style(f"    {change.describe()}", fg="yellow"))
            echo(
                style(
                    f"    contextd verify {shorts[record.id]}  (still true)  or  "
                    f"contextd update {shorts[record.id]} ...  (it changed)",
                    fg="bright_black",
                )
            )
        names = "record names" if len(found) == 1 else "records name"
        echo(f"\n{len(found)} {names} code that changed since it was verified.")

    emit(
        {
            "repository": check.repository,
            "commits_read": check.commits,
            "anchored": check.anchored,
            "records": [
                record_view(r)
                | {
                    "stale": code_change_view(c),
                    "fix": [f"contextd verify {r.id}", f"contextd update {r.id}"],
                }
                for r, c in found
            ],
        },
        human,
        long=True,
    )


@click.command()
@limit_option()
@common_options
def quality(limit: int | None) -> None:
    """Find duplicates, thin rationale, missing tags, isolated and stale records, with the fix
    for each (through a pager on a terminal).

    \b
    Examples:
      contextd quality                 # every issue, and the command that fixes it
      contextd quality --limit 10
      contextd quality --json | jq '.counts'
    """
    app = get_app()
    project = app.current_project()
    duplicates = app.consolidation.survey(project).merges
    found = scan_quality(
        app.reader, project, app.settings.lifecycle.stale_days, duplicates=duplicates
    )
    counts: dict[str, int] = {}
    for issue in found:
        counts[issue.kind] = counts.get(issue.kind, 0) + 1
    issues = found[:limit] if limit else found
    shorts = app.reader.handles(
        [i.record.id for i in issues] + [i.other for i in issues if i.other]
    )

    def human() -> None:
        if not issues:
            echo("No quality issues found.")
            return
        for issue in issues:
            echo(f"{issue.kind:<15} {shorts[issue.record.id]}  {issue.record.title[:60]}")
            echo(
                style(
                    f"{'':<15} {issue.detail}; fix: {command_for(issue, shorts)}", fg="bright_black"
                )
            )
        echo("\n" + ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())))

    emit(
        {
            "counts": counts,
            "issues": [
                {
                    "kind": i.kind,
                    "id": i.record.id,
                    "title": i.record.title,
                    "detail": i.detail,
                    "fix": command_for(i, shorts),
                }
                for i in issues
            ],
        },
        human,
        long=True,
    )
    more_note(len(issues), len(found))


COMMANDS = [update, supersede, archive, unarchive, delete, verify, stale, quality]
