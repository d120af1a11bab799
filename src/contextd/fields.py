"""Every field of a record, declared once.

A field's name, the kinds that carry it, how people read it (label, heading), its CLI flag,
what it holds (the help text every surface shows: `--help`, MCP tool parameters and output
schemas), the least a new record must say in it and how to fix it, and whether it is a list.
The validation, the secret scan, the click options and the daemon's fast reader, the MCP tools,
the web form, the mirror and the repository files, and the quality scan all read this table;
none lists the fields again. contextd.models declares the same fields as typed values, and a
test holds the two together.

The standard library only: the fast reader of `contextd decide` imports it before anything else.
"""

__all__ = [
    "BODY_FIELDS",
    "KINDS",
    "RECORD_FIELDS",
    "BodyField",
    "KindSpec",
    "RecordField",
    "body_field",
    "body_fields",
    "flag_of",
    "text_fields",
]


class BodyField:
    """One field of a kind's body (see the module's docstring).

    `short`: a value kept on one line (a choice, path globs) rather than a section of text.
    `choices`: the values it takes, when it is a choice.
    """

    __slots__ = (
        "advice",
        "choices",
        "flag",
        "heading",
        "help",
        "kind",
        "many",
        "metavar",
        "minimum",
        "name",
        "required",
        "short",
    )

    def __init__(
        self,
        kind: str,
        name: str,
        heading: str,
        flag: str,
        help: str,
        *,
        minimum: int = 0,
        advice: str = "",
        required: bool = False,
        many: bool = False,
        short: bool = False,
        choices: tuple[str, ...] = (),
        metavar: str | None = None,
    ) -> None:
        self.kind, self.name, self.heading, self.flag, self.help = kind, name, heading, flag, help
        self.minimum, self.advice, self.required = minimum, advice, required or minimum > 0
        self.many, self.short, self.choices, self.metavar = many, short, choices, metavar

    @property
    def label(self) -> str:
        """The field as a sentence names it ("why chosen")."""
        return self.heading.lower()

    @property
    def described(self) -> str:
        """The help with the minimum in it, as a writer is told it."""
        if not self.minimum:
            return self.help
        return f"{self.help.rstrip('.')} ({self.minimum}+ characters)."

    @property
    def is_text(self) -> bool:
        """A free text (not a list, not a choice): the fields `append` may add to."""
        return not self.many and not self.choices


HARDNESS = ("absolute", "strong", "advisory")

BODY_FIELDS: tuple[BodyField, ...] = (
    BodyField(
        "decision",
        "problem",
        "Problem",
        "--problem",
        "The situation that forced a choice.",
        minimum=40,
        advice="describe the situation that forced a choice",
    ),
    BodyField(
        "decision",
        "why_chosen",
        "Why chosen",
        "--why",
        "Why this option won.",
        minimum=60,
        advice="give the reasons this option beat the alternatives, so a later session does "
        "not undo it",
    ),
    BodyField(
        "decision", "alternatives", "Alternatives", "--alternatives", "What else was considered."
    ),
    BodyField(
        "decision", "what_we_tried", "What we tried", "--tried", "What was tried, and how it went."
    ),
    BodyField("decision", "tradeoffs", "Trade-offs", "--tradeoffs", "What this choice costs."),
    BodyField(
        "constraint",
        "reason",
        "Reason",
        "--reason",
        "What breaks if the rule is ignored.",
        minimum=40,
        advice="explain what breaks if the rule is ignored",
    ),
    BodyField(
        "constraint",
        "hardness",
        "Hardness",
        "--hardness",
        "How binding the rule is: absolute (never break it), strong (only with a reason), "
        "advisory.",
        required=True,
        short=True,
        choices=HARDNESS,
    ),
    BodyField(
        "constraint",
        "scope",
        "Scope",
        "--scope",
        "Path globs the rule covers (.gitignore syntax), e.g. 'migrations/**'; none: everywhere.",
        many=True,
        short=True,
        metavar="GLOB",
    ),
    BodyField(
        "constraint",
        "triggering_incident",
        "Triggering incident",
        "--incident",
        "What happened that made the rule necessary.",
    ),
    BodyField(
        "pipeline",
        "purpose",
        "Purpose",
        "--purpose",
        "What the workflow achieves.",
        minimum=20,
        advice="say what the workflow achieves and when to run it",
    ),
    BodyField(
        "pipeline",
        "steps",
        "Steps",
        "--step",
        "The steps, in order, one line each.",
        required=True,
        many=True,
        metavar="S",
    ),
    BodyField("checkpoint", "goal", "Goal", "--goal", "What the work is for."),
    BodyField("checkpoint", "done", "Done", "--done", "What is finished.", many=True, metavar="D"),
    BodyField(
        "checkpoint", "next", "Next", "--next", "What comes next, in order.", many=True, metavar="N"
    ),
    BodyField("checkpoint", "problem", "Open problem", "--problem", "What is blocking or unclear."),
)
"""Each kind's fields, in the order people read them (and contextd.models declares them)."""


class RecordField:
    """A field every kind carries that a person may set or change."""

    __slots__ = ("flag", "heading", "help", "many", "metavar", "name")

    def __init__(
        self, name: str, heading: str, flag: str, help: str, *, many: bool, metavar: str
    ) -> None:
        self.name, self.heading, self.flag, self.help = name, heading, flag, help
        self.many, self.metavar = many, metavar

    @property
    def label(self) -> str:
        return self.heading.lower()


RECORD_FIELDS: tuple[RecordField, ...] = (
    RecordField(
        "category",
        "Category",
        "--category",
        "A memory's category: architecture, convention, gotcha, preference, user, ...",
        many=False,
        metavar="C",
    ),
    RecordField("tags", "Tags", "--tag", "Topic tags.", many=True, metavar="TAG"),
    RecordField(
        "retrieval_hints",
        "Retrieval hints",
        "--hint",
        "Other phrasings a later search might use: synonyms, symptoms, error messages (2-4 "
        "is best).",
        many=True,
        metavar="TEXT",
    ),
    RecordField(
        "priority", "Priority", "--priority", "1 (low) to 5 (critical).", many=False, metavar="N"
    ),
    RecordField(
        "related_to", "Related", "--related", "Ids of related records.", many=True, metavar="ID"
    ),
)


class KindSpec:
    """What each kind calls its title and the least it must say there, its main text, and the
    command and tool that record it."""

    __slots__ = (
        "argument",
        "command",
        "help",
        "kind",
        "label",
        "main",
        "minimum",
        "title_help",
        "tool",
    )

    def __init__(
        self,
        kind: str,
        *,
        main: str,
        argument: str,
        label: str,
        minimum: int,
        title_help: str,
        command: str,
        tool: str,
        help: str,
    ) -> None:
        self.kind, self.argument, self.label, self.minimum = kind, argument, label, minimum
        self.title_help, self.command, self.tool, self.help = title_help, command, tool, help
        self.main = main  # the text that carries the record: where `append` adds by default


KINDS: dict[str, KindSpec] = {
    spec.kind: spec
    for spec in (
        KindSpec(
            "memory",
            main="title",
            argument="text",
            label="memory text",
            minimum=10,
            title_help="The fact, in a sentence that stands alone.",
            command="add",
            tool="remember",
            help="Remember a fact, convention, gotcha or preference.",
        ),
        KindSpec(
            "decision",
            main="why_chosen",
            argument="summary",
            label="decision summary",
            minimum=10,
            title_help="The decision, in one line.",
            command="decide",
            tool="record_decision",
            help="Record a decision with its rationale.",
        ),
        KindSpec(
            "constraint",
            main="reason",
            argument="rule",
            label="rule",
            minimum=10,
            title_help="The rule that must hold, in one line.",
            command="constrain",
            tool="record_constraint",
            help="Record a rule that must hold, with its reason and scope.",
        ),
        KindSpec(
            "pipeline",
            main="purpose",
            argument="name",
            label="pipeline name",
            minimum=3,
            title_help="The workflow's name (release, migration...).",
            command="pipeline",
            tool="record_pipeline",
            help="Record a workflow as ordered steps.",
        ),
        KindSpec(
            "checkpoint",
            main="problem",
            argument="summary",
            label="checkpoint summary",
            minimum=5,
            title_help="Where work stands, in one line.",
            command="checkpoint",
            tool="checkpoint",
            help="Record where work stopped: goal, what is done, what is next.",
        ),
    )
}

_BY_KIND: dict[str, tuple[BodyField, ...]] = {
    kind: tuple(f for f in BODY_FIELDS if f.kind == kind) for kind in KINDS
}
_FLAGS = {f.name: f.flag for f in BODY_FIELDS} | {f.name: f.flag for f in RECORD_FIELDS}


def body_fields(kind: str) -> tuple[BodyField, ...]:
    """The fields of `kind`'s body, in the order people read them."""
    return _BY_KIND[kind]


def body_field(kind: str, name: str) -> BodyField | None:
    return next((f for f in _BY_KIND[kind] if f.name == name), None)


def text_fields(kind: str) -> tuple[str, ...]:
    """The free texts of `kind` a later session may add to, its main one first (a memory's
    is its title)."""
    main = KINDS[kind].main
    return (main, *(f.name for f in _BY_KIND[kind] if f.is_text and f.name != main))


def flag_of(name: str) -> str | None:
    """The CLI flag that sets a field (the same for every kind that has it), if any."""
    return _FLAGS.get(name)
