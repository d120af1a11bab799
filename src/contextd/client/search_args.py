"""The options of `search` and `recall`, declared once for click (contextd.cli.browse) and
the daemon's fast client (contextd.client.quick); see contextd.client.options. The standard
library only."""

from contextd.client.options import Option, Parsed
from contextd.client.options import parse as parse_with
from contextd.limits import MAX_SEARCH_LIMIT

__all__ = ["COMMAND_OPTIONS", "KIND_NAMES", "QUERY_OPTIONS", "parse"]

KIND_NAMES = ("memory", "decision", "constraint", "pipeline", "checkpoint")


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
            show_default=True,
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
_TABLE = {command: (*QUERY_OPTIONS, *own) for command, own in COMMAND_OPTIONS.items()}


def parse(argv: list[str]) -> Parsed | None:
    """`contextd ARGV` read as search or recall; None when it is anything else, or anything
    click should answer."""
    return parse_with(argv, _TABLE)
