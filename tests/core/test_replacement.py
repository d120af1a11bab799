"""The 'likely replaces' flag: a change cue in what the new record states, tied to the record
it names when it names one."""

import itertools

import pytest

from contextd.core.writing.replacement import likely_replaced
from contextd.models import (
    Body,
    ConstraintBody,
    DecisionBody,
    Hardness,
    Kind,
    MemoryBody,
    Origin,
    Record,
    Similar,
    Status,
)

_ids = itertools.count()


def _record(title: str, body: Body | None = None, status: Status = Status.ACTIVE) -> Record:
    kind = {
        DecisionBody: Kind.DECISION,
        ConstraintBody: Kind.CONSTRAINT,
    }.get(type(body), Kind.MEMORY)
    return Record(
        f"r{next(_ids)}",
        "p",
        kind,
        title,
        body or MemoryBody(),
        "architecture" if kind is Kind.MEMORY else None,
        (),
        (),
        Origin.USER,
        3,
        status,
        None,
        (),
        None,
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:00.000Z",
    )


NOTE = _record("GPU scheduler uses NATS for task transport")
LOOSER = 0.4


def _reason(new: Record, *near: tuple[Record, float]) -> str | None:
    found = likely_replaced(new, [Similar(r, s) for r, s in near], LOOSER)
    return found.replaces if found else None


def _flagged(new: Record, *near: tuple[Record, float]) -> str | None:
    found = likely_replaced(new, [Similar(r, s) for r, s in near], LOOSER)
    return found.record.id if found else None


def test_the_quick_starts_decision_does_not_replace_the_note_it_agrees_with() -> None:
    # "dropped" is in the problem, which tells what went wrong, not what changed.
    decision = _record(
        "Use NATS JetStream for the task queue",
        DecisionBody(
            problem="Redis pub/sub dropped tasks whenever workers reconnected during a deploy",
            why_chosen="JetStream keeps durable consumers with acks and replay",
            what_we_tried="Redis streams; dropped them after a week",
        ),
    )
    assert _reason(decision, (NOTE, 0.7)) is None


@pytest.mark.parametrize(
    ("title", "phrase"),
    [
        ("Work dispatch moved to NATS JetStream", "moved to"),
        ("Bumped the bcrypt cost to 12", "Bumped the bcrypt cost to"),
        ("Python 3.12 is now the floor for every service", "is now"),
    ],
)
def test_a_cue_that_names_nothing_old_flags_the_closest_record(title: str, phrase: str) -> None:
    other = _record("Deploys wait for the nightly backup")
    assert _reason(_record(title), (NOTE, 0.6), (other, 0.5)) == f"it says \u201c{phrase}\u201d"
    assert _flagged(_record(title), (NOTE, 0.6), (other, 0.5)) == NOTE.id
    assert _reason(_record(title), (NOTE, 0.3)) is None  # not similar enough


QUEUE = _record("Use NATS JetStream for the task queue")
DEPLOYS = _record("Deploys drain the task queue before they start")


@pytest.mark.parametrize(
    "title",
    [
        "Move the task queue from NATS JetStream to Redis Streams",
        "Replace NATS JetStream with Redis Streams for the task queue",
        "Switch the task queue from JetStream to Redis Streams",
        "Migrate off NATS to Redis Streams",
        "Use Redis Streams instead of NATS JetStream",
        "Deprecate JetStream in favour of Redis Streams",
        "Drop JetStream for Redis Streams",
        "JetStream retired; the task queue is Redis Streams",
        "NATS JetStream replaced by Redis Streams",
    ],
)
def test_an_imperative_replacement_flags_the_record_that_names_what_it_lets_go(
    title: str,
) -> None:
    """Even when another record is closer: the cue names JetStream, which only QUEUE holds."""
    assert _flagged(_record(title), (DEPLOYS, 0.75), (QUEUE, 0.55)) == QUEUE.id


def test_a_named_record_may_be_loosely_similar_but_not_unrelated() -> None:
    terraform = _record("Infrastructure definitions migrated to Terraform, state in S3")
    new = _record("Switched from Terraform to OpenTofu 1.6 after the BSL relicensing")
    assert _flagged(new, (terraform, 0.3)) == terraform.id
    assert _flagged(new, (terraform, 0.2)) is None


def test_a_cue_naming_something_no_near_record_holds_flags_nothing() -> None:
    new = _record("Replace Kiam with IAM Roles for Service Accounts")
    assert _flagged(new, (DEPLOYS, 0.8)) is None


def test_a_newer_record_under_the_same_title_replaces_it() -> None:
    old = _record("8. Keycloak User Administrators Configuration\n\n## Context\nOne realm.")
    new = _record("9. Keycloak User Administrators Configuration\n\n## Context\nTwo realms.")
    assert _reason(new, (old, 0.8)) == "it has the same title"


def test_a_body_sentence_that_names_an_older_record_as_let_go_flags_it() -> None:
    signon = _record("ADR003: Use GOV.UK Signon\n\n## Context\nUsers sign in with Signon.")
    notify = _record("ADR002: Use GOV.UK Notify\n\n## Context\nEmails go through Notify.")
    new = _record(
        "ADR015: Use an identity provider\n\n## Context\n"
        "We previously decided in [ADR003 Use GOV.UK Signon] to wait. See ADR002 for email."
    )
    assert _flagged(new, (notify, 0.6), (signon, 0.5)) == signon.id


def test_a_decision_cited_as_taken_is_replaced_only_when_the_new_record_changes_something() -> None:
    support = _record("ADR001: Support Model\n\n## Context\nTeams run their own services.")
    context = "## Context\nIn [ADR001](ADR001-support-model.md) we decided against a PaaS.\n\n"
    builds_on = _record(
        f"ADR003: Container Orchestration\n\n{context}## Decision\nWe will build on Kubernetes."
    )
    moves_off = _record(
        f"ADR016: Platform\n\n{context}## Decision\nWe will run a PaaS instead of Kubernetes."
    )
    assert _flagged(builds_on, (support, 0.6)) is None
    assert _flagged(moves_off, (support, 0.6)) == support.id


def test_a_decision_section_names_what_it_lets_go_of_by_its_proper_name() -> None:
    papertrail = _record("ADR013: Add PaperTrail gem for auditing and record backup")
    standard = _record("3. Use Standard for Ruby linting")
    access = _record("31. User access management")
    remove = _record(
        "ADR025: Decision Record Title\n\n## Context\nWe do not use versions.\n\n"
        "## Decision\n\nRemove Papertrail and clean up our code and database.\n\n"
        "## Consequences\nNo audit trail."
    )
    linting = _record(
        "16. Use rubocop-govuk for code linting\n\n## Decision\nChange from "
        "[Standard.rb](https://github.com/testdouble/standard) to the GovUK version."
    )
    common = _record(
        "32. Track deletion using other models\n\n## Decision\nWe will log removing user "
        "access in its own model."
    )
    assert _reason(remove, (papertrail, 0.7)) == "it says \u201cRemove Papertrail\u201d"
    assert _reason(linting, (standard, 0.6)) == "it says \u201cChange from Standard.rb\u201d"
    assert _flagged(common, (access, 0.6)) is None


def test_cues_in_sections_other_than_the_decision_stay_unread() -> None:
    papertrail = _record("ADR013: Add PaperTrail gem for auditing and record backup")
    new = _record(
        "ADR030: Audit log\n\n## Decision\nKeep an audit table.\n\n"
        "## Alternatives\nRemove Papertrail."
    )
    assert _flagged(new, (papertrail, 0.7)) is None


def test_cues_in_a_long_records_body_alone_flag_nothing() -> None:
    new = _record(
        "ADR040: Ensuring cluster stability\n\n## Context\nNodes are no longer replaced "
        "by hand; we drain them instead of deleting them."
    )
    assert _flagged(new, (NOTE, 0.8)) is None


def test_a_decisions_why_and_a_constraints_reason_can_carry_the_cue() -> None:
    decision = _record(
        "Queue on PostgreSQL",
        DecisionBody(problem="p" * 40, why_chosen="We no longer run a broker at all"),
    )
    constraint = _record(
        "Sign-in needs a passkey",
        ConstraintBody(
            reason="SMS codes were retired after the SIM-swap", hardness=Hardness.STRONG
        ),
    )
    sms = _record("Admins sign in with a code sent by SMS")
    assert _reason(decision, (NOTE, 0.6)) == "it says \u201cno longer\u201d"
    assert _reason(constraint, (sms, 0.3)) == "it says \u201cSMS codes were retired\u201d"


def test_other_technologies_named_without_a_cue_are_not_a_replacement() -> None:
    old = _record("Background jobs go through RQ on Redis")
    assert _reason(_record("The nightly batch is a Kubernetes CronJob"), (old, 0.7)) is None


def test_only_an_active_record_other_than_itself_can_be_replaced() -> None:
    new = _record("Work dispatch moved to NATS JetStream")
    gone = _record("Work dispatch on RQ", status=Status.SUPERSEDED)
    assert _reason(new, (gone, 0.8)) is None
    assert _reason(new, (new, 1.0)) is None


def test_a_long_cue_is_shown_clipped() -> None:
    new = _record("Rolled the billing API server back from Bun to Node 22")
    bun = _record("The billing API server runs on Bun")
    reason = _reason(new, (bun, 0.7))
    assert reason is not None and len(reason) <= 52


@pytest.mark.parametrize(
    "sentence",
    [
        "This is an addendum to [ADR019](ADR019-use-amazon-ses.md), which we decided earlier.",
        "We will augment the network policy previously described in ADR019.",
        "Was previously ADR 0019; renamed/renumbered when the records were merged.",
    ],
)
def test_a_sentence_that_adds_to_an_older_record_does_not_replace_it(sentence: str) -> None:
    ses = _record("ADR019: Use Amazon SES\n\n## Context\nEmails need attachments.")
    new = _record(f"ADR029: Send simple notifications with Notify\n\n## Context\n{sentence}")
    assert _flagged(new, (ses, 0.8)) is None


def test_a_number_inside_a_links_address_cites_no_record() -> None:
    objects = _record("ADR007: Store form text data as objects\n\n## Context\nText is JSON.")
    new = _record(
        "ADR009: Re-platform to Fargate\n\n## Context\nThe platform closes in [December "
        "2023](https://blog.example/2022/07/12/why-we-decided-to-close/)."
    )
    assert _flagged(new, (objects, 0.5)) is None


@pytest.mark.parametrize(
    ("title", "old_title", "flagged"),
    [
        ("Remove VCR gem and cassette fixtures", "32. Remove Bullet gem", False),
        ("Replace Terraform Cloud backend with AWS S3", "3. Split Terraform state", False),
        ("Remove Bullet gem", "5. use-bullet-to-catch-nplus1-queries", True),
        ("Switched from Standard.rb to rubocop-govuk", "3. Use Standard for Ruby linting", True),
    ],
)
def test_a_cue_names_a_record_by_its_name_not_by_a_word_they_share(
    title: str, old_title: str, flagged: bool
) -> None:
    """The thing let go of is named when its first word (its name) and at least half of its
    words are in the old headline, counting the words of a slug or a dotted name."""
    old = _record(old_title)
    assert (_flagged(_record(title), (old, 0.5)) == old.id) is flagged


def test_bump_as_a_noun_is_no_cue() -> None:
    release = _record("Deployments use CodePipeline and CodeBuild")
    assert _flagged(_record("Automate patch version bumps"), (release, 0.6)) is None


def test_what_follows_a_move_to_is_not_what_was_let_go_of() -> None:
    """A record "Moved to X: branches off main" moves to X; "main" is where branches start,
    not the old thing, so the move is a cue that names nothing old."""
    gitflow = _record("Git-flow: feature branches come off develop")
    new = _record("Moved to trunk-based development: short-lived branches off main")
    assert _flagged(new, (gitflow, 0.6)) == gitflow.id
