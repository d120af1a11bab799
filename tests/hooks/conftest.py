"""A project with the records most hook tests look for."""

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import DECISION, Cli

MIGRATION_RULE = [
    "constrain",
    "Never edit an applied migration",
    "--reason",
    "Applied migrations are checksummed and edits break every later deploy",
    "--hardness",
    "absolute",
    "--scope",
    "migrations/**",
]
LOGGING_RULE = [
    "constrain",
    "Log through the structured logger, never print",
    "--reason",
    "The log shipper only parses JSON lines; print output is dropped in production",
    "--hardness",
    "strong",
]


@dataclass(frozen=True)
class Seeded:
    repo: Path
    migration_rule: str  # absolute constraint scoped to migrations/**
    logging_rule: str  # strong constraint, no scope
    decision: str  # DECISION (NATS for the task queue)


@pytest.fixture
def seeded(repo: Path, run: Cli) -> Seeded:
    decision = run.json(*DECISION)["id"]
    logging_rule = run.json(*LOGGING_RULE)["id"]
    migration_rule = run.json(*MIGRATION_RULE)["id"]
    return Seeded(repo, migration_rule, logging_rule, decision)
