"""The Decision section of a Markdown text: where an ADR says what is true now."""

import pytest

from contextd.markdown import decision_section, headline

ADR = """# 12. Queue

## Context

Jobs were lost on deploys.

## Decision

We will use [NATS JetStream](https://nats.io) for every job.

### Consumers

Each worker acks after the write.

## Consequences

One more server to run.
"""


def test_the_section_runs_to_the_next_heading_of_its_level_with_links_as_words() -> None:
    assert decision_section(ADR) == (
        "We will use NATS JetStream for every job.\n\n### Consumers\n\n"
        "Each worker acks after the write."
    )


@pytest.mark.parametrize(
    "heading", ["## Decision Outcome", "### The decision:", "# DECISIONS", "## decision"]
)
def test_the_usual_headings_of_the_section(heading: str) -> None:
    assert decision_section(f"# T\n\n{heading}\nUse Postgres.\n") == "Use Postgres."


@pytest.mark.parametrize(
    "text",
    [
        "Decision: use Postgres",  # not a heading
        "## Decision drivers\n\nCost.",  # what led to it, not what it is
        "# Notes\n\nWe decided on Postgres.",
    ],
)
def test_no_section_is_empty(text: str) -> None:
    assert decision_section(text) == ""


def test_the_headline_is_the_first_line() -> None:
    assert headline("  ADR001: Support model\n\n## Context\n") == "ADR001: Support model"
