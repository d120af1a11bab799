"""Every text a record carries is scanned for secrets, on every way in: the fields are read from
the record model itself, so a field added later is scanned without anyone listing it."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from contextd.app import App
from contextd.core.writing.admission import FROM_A_TEAMMATE, admit_record
from contextd.errors import ValidationError
from contextd.models import (
    BODY_TYPES,
    ConstraintBody,
    Hardness,
    Kind,
    Origin,
    Record,
    RecordDraft,
    Status,
    body_from_dict,
)
from tests.conftest import Cli
from tests.daemon._support import Daemons
from tests.hooks._support import hook_env
from tests.mcp.test_tools import call

SECRET = "ghp_" + "Zq8RkV2mXw7NpL4sT9bYcJ3hF6dG1aE5uK0o"
STAMP = "2026-11-30T10:00:00.000Z"
GOOD_BODIES: dict[Kind, dict[str, Any]] = {
    Kind.MEMORY: {},
    Kind.DECISION: {
        "problem": "Redis pub/sub dropped tasks whenever workers reconnected during a deploy",
        "why_chosen": "JetStream keeps durable consumers with acks and replay for every worker",
    },
    Kind.CONSTRAINT: {
        "reason": "Applied migrations already ran in production; editing one forks the schema",
        "hardness": "absolute",
        "scope": ["migrations/**"],
    },
    Kind.PIPELINE: {"purpose": "Ship a release to the staging cluster", "steps": ["build"]},
    Kind.CHECKPOINT: {"goal": "Move the queue to NATS"},
}


def _record(kind: Kind, **changes: Any) -> Record:
    record = Record(
        id="01a23228-0000-7000-8000-00000000beef",
        project_id=None,
        kind=kind,
        title="A record title long enough for every kind",
        body=body_from_dict(kind, GOOD_BODIES[kind]),
        category="gotcha",
        tags=("queue",),
        retrieval_hints=(),
        origin=Origin.USER,
        priority=3,
        status=Status.ACTIVE,
        superseded_by=None,
        related_to=(),
        session_id=None,
        created_at=STAMP,
        updated_at=STAMP,
        verified_at=STAMP,
    )
    return replace(record, **changes)


def _text_fields() -> list[tuple[Kind, str, bool]]:
    """(kind, body field, holds a list) for every text field of every body, from the model."""
    found = []
    for kind, body_type in BODY_TYPES.items():
        for name, annotation in body_type.__annotations__.items():
            if annotation is str or annotation == tuple[str, ...]:
                found.append((kind, name, annotation is not str))
    return found


@pytest.mark.parametrize(("kind", "name", "many"), _text_fields())
def test_a_secret_in_any_body_field_is_refused_naming_the_field(
    kind: Kind, name: str, many: bool
) -> None:
    body = dict(GOOD_BODIES[kind])
    body[name] = [f"see {SECRET}"] if many else f"The worker signs in with {SECRET} today"
    record = _record(kind)
    hostile = replace(record, body=body_from_dict(kind, body))
    with pytest.raises(ValidationError) as refused:
        admit_record(hostile, FROM_A_TEAMMATE)
    assert refused.value.field == name and SECRET not in str(refused.value)


@pytest.mark.parametrize(
    "changes",
    [
        {"category": SECRET.lower()},
        {"title": f"Deploy with {SECRET}"},
        {"tags": (SECRET.lower()[:40],)},
        {"retrieval_hints": (f"token {SECRET}",)},
        {"archived_reason": f"rotated {SECRET}", "status": Status.ARCHIVED},
    ],
    ids=lambda c: next(iter(c)),
)
def test_a_secret_in_any_record_field_is_refused(changes: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as refused:
        admit_record(_record(Kind.MEMORY, **changes), FROM_A_TEAMMATE)
    assert refused.value.field == next(iter(changes))
    assert SECRET not in str(refused.value) and SECRET.lower() not in str(refused.value)


def test_a_teammates_claims_are_held_to_what_a_teammate_may_claim() -> None:
    claimed = replace(
        _record(Kind.CONSTRAINT, archived_reason=None),
        priority=5,
        body=ConstraintBody(GOOD_BODIES[Kind.CONSTRAINT]["reason"], Hardness.ABSOLUTE),
    )
    admitted = admit_record(claimed, FROM_A_TEAMMATE)
    assert (admitted.origin, admitted.priority) == ("import", 3)
    assert isinstance(admitted.body, ConstraintBody) and admitted.body.hardness is Hardness.STRONG


def test_the_writer_refuses_a_secret_category_before_any_message_could_quote_it(
    app: App,
) -> None:
    draft = RecordDraft(
        Kind.MEMORY,
        "Builds need Node 20 on every runner",
        body_from_dict(Kind.MEMORY, {}),
        category="github_pat_" + "A1b2" * 20,
    )
    project = app.current_project()
    with pytest.raises(ValidationError) as refused:
        app.writer.create(draft, project)
    assert refused.value.field == "category" and "github_pat_A1b2" not in str(refused.value)


def _no_secret_stored(home: Path) -> None:
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes().lower()
            assert SECRET[10:30].lower().encode() not in data, path


def test_a_secret_category_is_refused_by_the_cli_and_mcp(app: App, run: Cli, home: Path) -> None:
    result = run("add", "Builds need Node 20 on every runner", "--category", SECRET)
    assert result.exit_code == 2 and "category" in result.stderr
    assert SECRET.lower() not in result.output.lower() and "Traceback" not in result.output
    (remembered,) = call(
        app,
        ("remember", {"text": "Builds need Node 20 on every runner", "category": SECRET}),
    )
    assert remembered.is_error and SECRET.lower() not in remembered.content[0].text.lower()
    _no_secret_stored(home)


def test_a_secret_category_is_refused_through_the_daemon(
    daemons: Daemons, repo: Path, home: Path
) -> None:
    daemons.start()
    done = subprocess.run(
        [sys.executable, "-m", "contextd", "add", "Builds need Node 20", "--category", SECRET],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=repo,
        env=hook_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and "category" in done.stderr, done.stderr
    assert SECRET.lower() not in (done.stdout + done.stderr).lower()
    listed = json.loads(
        subprocess.run(
            [sys.executable, "-m", "contextd", "memories", "--json"],
            capture_output=True,
            text=True,
            encoding="utf-8",
            cwd=repo,
            env=hook_env(),
            timeout=120,
            check=True,
        ).stdout
    )
    assert SECRET.lower() not in json.dumps(listed).lower()
