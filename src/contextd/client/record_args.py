"""The record commands (`add`, `decide`, `constrain`, `pipeline`, `checkpoint`) declared once:
click builds them from this table (contextd.cli.capture), the daemon's fast client reads an
argv with it (contextd.client.quick), and both turn what was given into the same draft. The
standard library only: a write the daemon stores never imports click or msgspec."""

from collections.abc import Mapping

from contextd.client.options import Option, Parsed
from contextd.client.options import parse as parse_with
from contextd.fields import KINDS, RECORD_FIELDS, BodyField, body_fields

__all__ = [
    "RECORD_COMMANDS",
    "ORIGIN_NAMES",
    "RECORD_OPTIONS",
    "Command",
    "draft",
    "parse",
]

ORIGIN_NAMES = ("user", "agent", "import")


class Command:
    """One record command: the kind it stores, its argument's name, its help and own options."""

    __slots__ = ("argument", "help", "kind", "options")

    def __init__(self, kind: str, argument: str, help: str, options: tuple[Option, ...]) -> None:
        self.kind, self.argument, self.help, self.options = kind, argument, help, options


RECORD_OPTIONS = (
    Option("--tag", "tags", "A tag (repeatable).", multiple=True, metavar="TAG"),
    Option(
        "--hint",
        "hints",
        "Another phrasing a later search might use (repeatable, 2-4 is best).",
        multiple=True,
        metavar="TEXT",
    ),
    Option("--global", "is_global", "Applies to every project, not just this one.", kind="flag"),
    Option(
        "--private",
        "private",
        "Keep it in this store only, never in a shared project's repository files (on a "
        "team server, only you see it).",
        kind="flag",
    ),
    Option(
        "--priority",
        "priority",
        "1 (low) to 5 (critical).",
        kind="int",
        bounds=(1, 5),
        default=3,
        show_default=True,
    ),
    Option(
        "--origin",
        "origin",
        "Who stated it: trust is user > agent > import.",
        choices=ORIGIN_NAMES,
        default="user",
        show_default=True,
    ),
    Option(
        "--related", "related", "Id of a related record (repeatable).", multiple=True, metavar="ID"
    ),
    Option("--force", "force", "Store it even if it restates a stored record.", kind="flag"),
    Option(
        "--supersedes",
        "supersedes",
        "Mark this older record as replaced by the new one (repeatable).",
        multiple=True,
        metavar="ID",
    ),
)
"""Options every record command shares."""


def _body_option(spec: BodyField) -> Option:
    """The option that fills one body field, as the catalogue declares it."""
    return Option(
        spec.flag,
        spec.name,
        spec.described + (" (repeatable)" if spec.many else ""),
        multiple=spec.many,
        required=spec.required,
        choices=spec.choices,
        default=None if spec.required or spec.many else "",
        metavar=spec.metavar,
        field=spec.name,
    )


_CATEGORY = next(f for f in RECORD_FIELDS if f.name == "category")
RECORD_COMMANDS = {
    spec.command: Command(
        kind,
        spec.argument,
        spec.help,
        tuple(_body_option(f) for f in body_fields(kind))
        or (Option(_CATEGORY.flag, "category", _CATEGORY.help, required=True, metavar="C"),),
    )
    for kind, spec in KINDS.items()
}
_TABLE = {name: (*command.options, *RECORD_OPTIONS) for name, command in RECORD_COMMANDS.items()}


def parse(argv: list[str]) -> Parsed | None:
    """`contextd ARGV` read as a record command; None when it is anything else, or anything
    click should answer."""
    return parse_with(argv, _TABLE)


def draft(command: str, title: str, values: Mapping[str, object]) -> dict[str, object]:
    """The record draft (as plain data, the shape of contextd.models.RecordDraft) that
    `command` asks to store, from its argument and option values."""
    spec = RECORD_COMMANDS[command]
    body: dict[str, object] = {"kind": spec.kind}
    for option in spec.options:
        if option.field is not None:
            value = values[option.dest]
            body[option.field] = list(value) if isinstance(value, list | tuple) else value
    return {
        "kind": spec.kind,
        "title": title,
        "body": body,
        "category": values.get("category"),
        "tags": list(_strings(values["tags"])),
        "retrieval_hints": list(_strings(values["hints"])),
        "origin": values["origin"],
        "priority": values["priority"],
        "related_to": list(_strings(values["related"])),
        "is_global": bool(values["is_global"]),
        "private": bool(values["private"]),
    }


def _strings(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list | tuple) else ()
