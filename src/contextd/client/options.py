"""Options declared once, for click and for the daemon's fast client alike: click builds a
command's options from its table (contextd.cli._declared), and contextd.client.quick reads an
argv with the same table before click is imported. Whatever the fast reader does not fully
understand (help, an unknown or malformed option, a missing required one, a value click would
refuse) it leaves to click, which says what is wrong. The standard library only."""

from collections.abc import Mapping

from contextd.text.printer import COLOUR_MODES

__all__ = ["COMMON", "Option", "Parsed", "parse"]


class Option:
    """One option: `kind` is "flag", "text" or "int"; `field` names the record body field a
    record command's option fills (contextd.client.record_args)."""

    __slots__ = (
        "bounds",
        "choices",
        "default",
        "dest",
        "field",
        "flag",
        "help",
        "kind",
        "metavar",
        "multiple",
        "required",
        "show_default",
    )

    def __init__(
        self,
        flag: str,
        dest: str,
        help: str,
        *,
        kind: str = "text",
        multiple: bool = False,
        required: bool = False,
        choices: tuple[str, ...] = (),
        bounds: tuple[int, int] | None = None,
        default: str | int | None = None,
        show_default: bool = False,
        metavar: str | None = None,
        field: str | None = None,
    ) -> None:
        self.flag, self.dest, self.help, self.kind = flag, dest, help, kind
        self.multiple, self.required, self.choices, self.bounds = (
            multiple,
            required,
            choices,
            bounds,
        )
        self.default, self.show_default, self.metavar = default, show_default, metavar
        self.field = field

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
    Option("--color", "color", "Colour: auto, always or never.", choices=COLOUR_MODES),
)


class Parsed:
    """An argv as click would have read it: the command, its one argument, and each option's
    value by its name (the options of the root group and of the command merged)."""

    __slots__ = ("argument", "command", "values")

    def __init__(self, command: str, argument: str, values: dict[str, object]) -> None:
        self.command, self.argument, self.values = command, argument, values


def parse(
    argv: list[str], table: Mapping[str, tuple[Option, ...]], arguments: int = 1
) -> Parsed | None:
    """`contextd ARGV` read as one of `table`'s commands (each taking `arguments` arguments,
    one or none, and the options listed; a command of a group is named by both words, "mcp
    serve"); None when it is anything else, or anything click should answer."""
    common = {option.flag: option for option in COMMON}
    root: dict[str, object] = {}
    at: int | None = 0
    while at is not None and at < len(argv) and argv[at].startswith("-"):
        at = _take(common, argv, at, root)
    named = _command(argv, at, table)
    if named is None:
        return None
    command, at = named
    known = {option.flag: option for option in (*COMMON, *table[command])}
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
    if len(positional) != arguments:
        return None
    if any(option.required and not own.get(option.dest) for option in table[command]):
        return None
    values = _defaults((*COMMON, *table[command]))
    common_names = {option.dest for option in COMMON}
    for given in (root, own):  # the command's own --json/--home/--project win, as in click
        for name, value in given.items():
            if value or name not in common_names:  # an empty --home or --project is ignored
                values[name] = value
    return Parsed(command, positional[0] if positional else "", values)


def _command(
    argv: list[str], at: int | None, table: Mapping[str, object]
) -> tuple[str, int] | None:
    """The command named at argv[at] (one word, or a group's two) and where its name ends."""
    if at is None or at >= len(argv):
        return None
    for words in (1, 2):
        command = " ".join(argv[at : at + words])
        if command in table:
            return command, at + words - 1
    return None


def _defaults(options: tuple[Option, ...]) -> dict[str, object]:
    values: dict[str, object] = {}
    for option in options:
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
