"""The hot commands, declared once: `search`, `recall` and the record commands (`add`,
`decide`, `constrain`, `pipeline`, `checkpoint`), each its options, help and the one request
it makes.

click builds each command from its row (contextd.cli.hot), and the daemon's fast client reads
an argv with it before click is imported (contextd.client.quick). Both then build the same
request with `request` and have it answered by the same code (contextd.service.answer), in
the daemon or in this process, and print the answer with contextd.client.results. The
standard library only.
"""

import os
from collections.abc import Mapping

from contextd.client.options import Option, Parsed
from contextd.client.options import parse as parse_with
from contextd.fields import KINDS, RECORD_FIELDS, BodyField, body_fields
from contextd.limits import MAX_SEARCH_LIMIT

__all__ = ["COMMANDS", "KIND_NAMES", "ORIGIN_NAMES", "Command", "parse", "request"]

KIND_NAMES = tuple(KINDS)
ORIGIN_NAMES = ("user", "agent", "import")


class Command:
    """One hot command: what it asks (search, recall or write), its argument, its help, its
    options in the order `--help` shows them, and for a write the kind it stores."""

    __slots__ = ("argument", "asks", "help", "kind", "name", "options")

    @property
    def help_text(self) -> str:
        """The help with its examples, as `--help` shows it (\\b keeps click's lines)."""
        lines = EXAMPLES.get(self.name, ())
        if not lines:
            return self.help
        return self.help + "\n\n\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)

    def __init__(
        self,
        name: str,
        asks: str,
        argument: str,
        help: str,
        options: tuple[Option, ...],
        kind: str = "",
    ) -> None:
        self.name, self.asks, self.argument, self.help = name, asks, argument, help
        self.options, self.kind = options, kind


_QUERY_OPTIONS = (
    Option("--kind", "kinds", "Only this kind (repeatable).", multiple=True, choices=KIND_NAMES),
    Option("--tag", "tags", "Only records with this tag (repeatable).", multiple=True),
    Option("--category", "category", "Only memories of this category."),
    Option("--since", "since", "Created on or after (2026-11-01, 30d, 12h).", metavar="WHEN"),
    Option("--before", "before", "Created before (2026-11-01, 30d, 12h).", metavar="WHEN"),
    Option(
        "--by",
        "dates_by",
        "Count --since/--before from the created (default) or the last verified time.",
        choices=("created", "verified"),
    ),
    Option(
        "--include-superseded",
        "include_superseded",
        "Also replaced records (labelled NOT CURRENT).",
        kind="flag",
    ),
    Option("--include-archived", "include_archived", "Also archived records.", kind="flag"),
    Option(
        "--path",
        "path",
        "Records about this file first: a constraint whose scope covers it, text naming it.",
        metavar="FILE",
    ),
    Option("--mmr", "diversify", "Prefer diverse results over near-duplicates.", kind="flag"),
    Option("--explain", "explain", "Show each scoring term per hit.", kind="flag"),
)
_LIMIT = Option(
    "--limit",
    "limit",
    "How many hits at most.",
    kind="int",
    bounds=(1, MAX_SEARCH_LIMIT),
    default=10,
    show_default=True,
)
_BUDGET = Option(
    "--budget",
    "budget",
    "Token budget (default: context.max_context_tokens).",
    kind="int",
    metavar="TOKENS",
)

_RECORD_OPTIONS = (
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
        "--in-group",
        "in_group",
        "Applies to every project of this project's group (`contextd group`).",
        kind="flag",
    ),
    Option(
        "--group",
        "group",
        "Applies to every project of this group (the project must be a member).",
        metavar="NAME",
    ),
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


def _body_option(spec: BodyField) -> Option:
    """The option that fills one body field, as the field catalogue declares it."""
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


def _record_command(kind: str) -> Command:
    spec = KINDS[kind]
    own = tuple(_body_option(f) for f in body_fields(kind))
    if not own:  # a memory's one field of its own
        category = next(f for f in RECORD_FIELDS if f.name == "category")
        own = (Option(category.flag, "category", category.help, required=True, metavar="C"),)
    return Command(spec.command, "write", spec.argument, spec.help, own + _RECORD_OPTIONS, kind)


COMMANDS: dict[str, Command] = {
    "search": Command(
        "search",
        "search",
        "query",
        "Hybrid search (full-text + meaning) over the project's records and the global ones; "
        "without QUERY, the records the filters select.",
        (_LIMIT, *_QUERY_OPTIONS),
    ),
    "recall": Command(
        "recall",
        "recall",
        "query",
        "The context an agent receives for QUERY (or, without one, the current records the "
        "filters select), packed into a token budget.",
        (_BUDGET, *_QUERY_OPTIONS),
    ),
    **{KINDS[kind].command: _record_command(kind) for kind in KINDS},
}
_TABLE = {name: command.options for name, command in COMMANDS.items()}

# What `--help` shows under each command, typed as a person would.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "search": (
        'contextd search "task queue"',
        "contextd search retries --kind decision --since 30d",
        "contextd search --tag queue --limit 5 --json",
    ),
    "recall": (
        'contextd recall "how do workers pick up tasks?"',
        "contextd recall --path src/queue/worker.py --budget 1500",
    ),
    "add": (
        'contextd add "Deploys need the VPN on release days" --category gotcha',
        'contextd add "Use snake_case for table names" --category convention --global',
    ),
    "decide": (
        'contextd decide "Use NATS for the task queue" \\',
        '    --problem "Redis pub/sub dropped tasks when workers reconnected" \\',
        '    --why "JetStream keeps durable consumers, so a worker resumes where it stopped"',
    ),
    "constrain": (
        'contextd constrain "Never edit an applied migration" --hardness absolute \\',
        '    --reason "Applied migrations are checksummed on every deploy" \\',
        "    --scope 'migrations/**'",
    ),
    "pipeline": (
        'contextd pipeline "Release" --purpose "Ship a tagged build to the package index" \\',
        '    --step "bump the version" --step "tag and push" --step "publish the wheel"',
    ),
    "checkpoint": (
        'contextd checkpoint "Halfway through moving the queue to NATS" \\',
        '    --goal "Queue on NATS" --next "port the retry worker"',
    ),
}


def parse(argv: list[str]) -> Parsed | None:
    """`contextd ARGV` read as one of the hot commands; None when it is anything else, or
    anything click should answer (help, an unknown or malformed option)."""
    return parse_with(argv, _TABLE)


def request(
    command: Command, argument: str, values: Mapping[str, object], place: Mapping[str, object]
) -> dict[str, object]:
    """The request `command` makes (contextd.service.requests gives its type) with `argument`
    and its option values, from `place`: the home, the code stamp, the project asked for by
    name and the folder the command runs in.

    Raises:
        InvalidInputError: a --since or --before that is not a date.
    """
    if command.asks == "write":
        return {
            "kind": "write",
            **place,
            "draft": _draft(command, argument, values),
            "force": bool(values["force"]),
            "supersedes": _strings(values["supersedes"]),
        }
    asked: dict[str, object] = {
        "kind": command.asks,
        **place,
        "query": _query(argument, values, str(place["folder"])),
        "explain": bool(values["explain"]),
        "json": bool(values["json"]),
    }
    if command.asks == "recall":
        asked["budget"] = values["budget"]
    return asked


def _query(text: str, values: Mapping[str, object], folder: str) -> dict[str, object]:
    """The query as contextd.models.SearchQuery takes it."""
    path = values["path"]
    return {
        "text": text,
        "kinds": _strings(values["kinds"]),
        "tags": _strings(values["tags"]),
        "category": values["category"],
        "since": _instant(values["since"], "--since"),
        "before": _instant(values["before"], "--before"),
        "dates_by": values["dates_by"] or "created",
        "path": os.path.join(folder, str(path)) if path else None,
        "limit": values.get("limit") or 10,
        "include_superseded": bool(values["include_superseded"]),
        "include_archived": bool(values["include_archived"]),
        "diversify": bool(values["diversify"]),
    }


def _draft(command: Command, title: str, values: Mapping[str, object]) -> dict[str, object]:
    """The draft as contextd.models.RecordDraft takes it."""
    body: dict[str, object] = {"kind": command.kind}
    for option in command.options:
        if option.field is not None:
            value = values[option.dest]
            body[option.field] = list(value) if isinstance(value, list | tuple) else value
    return {
        "kind": command.kind,
        "title": title,
        "body": body,
        "category": values.get("category"),
        "tags": _strings(values["tags"]),
        "retrieval_hints": _strings(values["hints"]),
        "origin": values["origin"],
        "priority": values["priority"],
        "related_to": _strings(values["related"]),
        "is_global": bool(values["is_global"]),
        "group": values["group"] if values["group"] else "" if values["in_group"] else None,
        "private": bool(values["private"]),
    }


def _strings(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list | tuple) else []


def _instant(value: object, option: str) -> str | None:
    if value is None:
        return None
    from contextd.clock import parse_date  # (re, datetime) only when a date is given

    return parse_date(str(value), option)
