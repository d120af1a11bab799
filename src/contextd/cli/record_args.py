"""The record commands (`add`, `decide`, `constrain`, `pipeline`, `checkpoint`) declared once:
click builds them from this table (contextd.cli.capture), the daemon's fast client reads an
argv with it (contextd.cli.quick), and both turn what was given into the same draft. The
standard library only: a write the daemon stores never imports click or msgspec."""

from collections.abc import Mapping

from contextd.cli.argv_table import Option, Parsed
from contextd.cli.argv_table import parse as parse_with
from contextd.limits import MIN_PROBLEM_CHARS, MIN_PURPOSE_CHARS, MIN_REASON_CHARS, MIN_WHY_CHARS

__all__ = [
    "RECORD_COMMANDS",
    "ORIGIN_NAMES",
    "HARDNESS_NAMES",
    "RECORD_OPTIONS",
    "Command",
    "draft",
    "parse",
]

ORIGIN_NAMES = ("user", "agent", "import")
HARDNESS_NAMES = ("absolute", "strong", "advisory")


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

RECORD_COMMANDS = {
    "add": Command(
        "memory",
        "text",
        "Remember a fact, convention, gotcha or preference.",
        (
            Option(
                "--category",
                "category",
                "architecture, convention, gotcha, preference, user, ...",
                required=True,
                metavar="C",
            ),
        ),
    ),
    "decide": Command(
        "decision",
        "summary",
        "Record a decision with its rationale.",
        (
            Option(
                "--problem",
                "problem",
                f"The situation that forced a choice ({MIN_PROBLEM_CHARS}+ characters).",
                required=True,
                field="problem",
            ),
            Option(
                "--why",
                "why",
                f"Why this option won ({MIN_WHY_CHARS}+ characters).",
                required=True,
                field="why_chosen",
            ),
            Option(
                "--alternatives",
                "alternatives",
                "What else was considered.",
                default="",
                field="alternatives",
            ),
            Option(
                "--tried",
                "tried",
                "What was tried, and what happened.",
                default="",
                field="what_we_tried",
            ),
            Option(
                "--tradeoffs", "tradeoffs", "What this choice costs.", default="", field="tradeoffs"
            ),
        ),
    ),
    "constrain": Command(
        "constraint",
        "rule",
        "Record a rule that must hold, with its reason and scope.",
        (
            Option(
                "--reason",
                "reason",
                f"What breaks if the rule is ignored ({MIN_REASON_CHARS}+ characters).",
                required=True,
                field="reason",
            ),
            Option(
                "--scope",
                "scopes",
                "Path glob the rule covers, e.g. 'migrations/**' (repeatable).",
                multiple=True,
                metavar="GLOB",
                field="scope",
            ),
            Option(
                "--hardness",
                "hardness",
                "How binding the rule is.",
                required=True,
                choices=HARDNESS_NAMES,
                field="hardness",
            ),
            Option(
                "--incident",
                "incident",
                "What happened that made the rule necessary.",
                default="",
                field="triggering_incident",
            ),
        ),
    ),
    "pipeline": Command(
        "pipeline",
        "name",
        "Record a workflow as ordered steps.",
        (
            Option(
                "--purpose",
                "purpose",
                f"What the workflow achieves ({MIN_PURPOSE_CHARS}+ characters).",
                required=True,
                field="purpose",
            ),
            Option(
                "--step",
                "steps",
                "One step, in order (repeat for each).",
                multiple=True,
                required=True,
                metavar="S",
                field="steps",
            ),
        ),
    ),
    "checkpoint": Command(
        "checkpoint",
        "summary",
        "Record where work stopped: goal, what is done, what is next.",
        (
            Option("--goal", "goal", "What the work is for.", default="", field="goal"),
            Option(
                "--done",
                "done",
                "Something finished (repeatable).",
                multiple=True,
                metavar="D",
                field="done",
            ),
            Option(
                "--next",
                "next_steps",
                "The next step (repeatable).",
                multiple=True,
                metavar="N",
                field="next",
            ),
            Option("--problem", "problem", "An open problem.", default="", field="problem"),
        ),
    ),
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
