"""The options of `search` and `recall`, declared once: click builds its options from this
table (contextd.cli.browse), and the daemon's fast client (contextd.cli.quick) reads an argv
with it before click is imported. Whatever the fast reader does not fully understand (help,
an unknown or malformed option, a value click would refuse) it leaves to click, which says
what is wrong. The standard library only."""

from contextd.limits import MAX_SEARCH_LIMIT

__all__ = ["COMMAND_OPTIONS", "COMMON", "KIND_NAMES", "QUERY_OPTIONS", "Option", "Parsed", "parse"]

KIND_NAMES = ("memory", "decision", "constraint", "pipeline", "checkpoint")


class Option:
    """One option: `kind` is "flag", "text" or "int"."""

    __slots__ = (
        "bounds",
        "choices",
        "default",
        "dest",
        "flag",
        "help",
        "kind",
        "metavar",
        "multiple",
    )

    def __init__(
        self,
        flag: str,
        dest: str,
        help: str,
        *,
        kind: str = "text",
        multiple: bool = False,
        choices: tuple[str, ...] = (),
        bounds: tuple[int, int] | None = None,
        default: int | None = None,
        metavar: str | None = None,
    ) -> None:
        self.flag, self.dest, self.help, self.kind = flag, dest, help, kind
        self.multiple, self.choices, self.bounds = multiple, choices, bounds
        self.default, self.metavar = default, metavar

    def convert(self, raw: str) -> str | int | None:
        """The value as click would pass it, or None when click would refuse it."""
        if self.choices and raw not in self.choices:
            return None
        if self.kind != "int":
            return raw
        try:
            number = int(raw)
        except ValueError:
            return None
        if self.bounds and not self.bounds[0] <= number <= self.bounds[1]:
            return None
        return number


# Declared with click in contextd.cli._context (they also sit on the root group).
COMMON = (
    Option("--json", "json", "Print machine-readable JSON.", kind="flag"),
    Option("--home", "home", "Store folder.", metavar="DIR"),
    Option("--project", "project", "Act on this project.", metavar="NAME"),
)
QUERY_OPTIONS = (
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
COMMAND_OPTIONS = {
    "search": (
        Option(
            "--limit",
            "limit",
            "How many hits at most.",
            kind="int",
            bounds=(1, MAX_SEARCH_LIMIT),
            default=10,
        ),
    ),
    "recall": (
        Option(
            "--budget",
            "budget",
            "Token budget (default: context.max_context_tokens).",
            kind="int",
            metavar="TOKENS",
        ),
    ),
}


class Parsed:
    """A search or recall argv as click would have read it: the command, its QUERY, and each
    option's value by its name (the options of the root group and of the command merged)."""

    __slots__ = ("command", "query", "values")

    def __init__(self, command: str, query: str, values: dict[str, object]) -> None:
        self.command, self.query, self.values = command, query, values


def parse(argv: list[str]) -> Parsed | None:
    """`contextd ARGV` read as search or recall; None when it is anything else, or anything
    click should answer."""
    common = {option.flag: option for option in COMMON}
    root: dict[str, object] = {}
    at: int | None = 0
    while at is not None and at < len(argv) and argv[at].startswith("-"):
        at = _take(common, argv, at, root)
    if at is None or at >= len(argv) or argv[at] not in COMMAND_OPTIONS:
        return None
    command = argv[at]
    known = {option.flag: option for option in (*COMMON, *QUERY_OPTIONS, *COMMAND_OPTIONS[command])}
    own: dict[str, object] = {}
    positional: list[str] = []
    at += 1
    while at < len(argv):
        arg = argv[at]
        if arg == "--":
            positional += argv[at + 1 :]
            break
        if arg.startswith("-") and arg != "-":
            taken = _take(known, argv, at, own)
            if taken is None:
                return None
            at = taken
        else:
            positional.append(arg)
            at += 1
    if len(positional) != 1:
        return None
    values = _defaults(command)
    common_names = {option.dest for option in COMMON}
    for given in (root, own):  # the command's own --json/--home/--project win, as in click
        for name, value in given.items():
            if value or name not in common_names:  # an empty --home or --project is ignored
                values[name] = value
    return Parsed(command, positional[0], values)


def _defaults(command: str) -> dict[str, object]:
    values: dict[str, object] = {}
    for option in (*COMMON, *QUERY_OPTIONS, *COMMAND_OPTIONS[command]):
        if option.kind == "flag":
            values[option.dest] = False
        else:
            values[option.dest] = [] if option.multiple else option.default
    return values


def _take(
    known: dict[str, Option], argv: list[str], at: int, values: dict[str, object]
) -> int | None:
    """Read the option at argv[at] into `values`; the index after it, or None when click
    should answer (an unknown option, a missing or refused value, help)."""
    flag, equals, inline = argv[at].partition("=")
    option = known.get(flag)
    if option is None:
        return None
    if option.kind == "flag":
        if equals:
            return None
        values[option.dest] = True
        return at + 1
    if equals:
        raw, at = inline, at + 1
    elif at + 1 < len(argv):
        raw, at = argv[at + 1], at + 2
    else:
        return None
    value = option.convert(raw)
    if value is None:
        return None
    if option.multiple:
        listed = values.setdefault(option.dest, [])
        assert isinstance(listed, list)
        listed.append(value)
    else:
        values[option.dest] = value
    return at
