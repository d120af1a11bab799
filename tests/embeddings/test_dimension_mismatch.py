"""Changing the vector width: the index reports the old vectors and refresh replaces them."""

import pytest

from tests.conftest import DECISION, Cli

CONSTRAINT = [
    "constrain",
    "Never edit an applied migration",
    "--reason",
    "Applied migrations are checksummed and edits break deploys",
    "--hardness",
    "strong",
]


@pytest.mark.usefixtures("repo")
def test_a_new_width_is_reported_and_force_refresh_re_embeds_every_record(run: Cli) -> None:
    decision = run.json(*DECISION)
    run.json(*CONSTRAINT)
    before = run.json("config", "--check")["check"]
    assert before["provider"] == "hashing:v1:384"
    assert before["index"]["embedded"] == 2 and before["index"]["other_models"] == {}
    assert before["fix"] is None

    result = run("config", "set", "embeddings.dimensions", "256")
    assert result.exit_code == 0, result.output
    stale = run.json("config", "--check")["check"]
    assert stale["provider"] == "hashing:v1:256" and stale["dimensions"] == 256
    assert stale["index"]["records"] == 2 and stale["index"]["embedded"] == 0
    assert stale["index"]["other_models"] == {"hashing:v1:384/384": 2}
    assert stale["fix"] == "contextd refresh --force-embeddings"

    refreshed = run.json("refresh", "--force-embeddings")
    assert refreshed["embedded"] == 2
    assert refreshed["index"]["provider"] == "hashing:v1:256"
    assert refreshed["index"]["embedded"] == 2
    assert refreshed["index"]["other_models"] == {}

    after = run.json("config", "--check")["check"]
    assert after["index"]["other_models"] == {} and after["index"]["embedded"] == 2
    assert after["fix"] is None

    found = run.json("search", "task queue")
    assert "degraded" not in found
    assert found["results"][0]["id"] == decision["id"]


@pytest.mark.usefixtures("repo")
def test_a_plain_refresh_after_a_width_change_replaces_each_old_vector(run: Cli) -> None:
    """A record keeps one vector, so re-embedding it at the new width drops the old one."""
    run.json(*DECISION)
    result = run("config", "set", "embeddings.dimensions", "256")
    assert result.exit_code == 0, result.output
    refreshed = run.json("refresh")
    assert refreshed["embedded"] == 1
    assert refreshed["index"]["embedded"] == 1
    assert refreshed["index"]["other_models"] == {}
    assert run.json("config", "--check")["check"]["fix"] is None
