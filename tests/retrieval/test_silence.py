"""Nothing fits, nothing is said: a query no record is about gets "No matches" from search,
recall and get_context, and the prompt hook injects nothing; a question worded unlike the
record it is about is still answered. The floor is learnt for the local model, so these run on
it; other providers keep every match."""

from pathlib import Path

import pytest

from contextd.app import App
from contextd.hooks.handlers import handle
from tests.conftest import DECISION, Cli
from tests.hooks._support import user_prompt
from tests.mcp.test_tools import call, data

RULE = (
    "constrain",
    "Never edit an applied database migration",
    "--reason",
    "Applied migrations are checksummed in production; an edit breaks the next deploy",
    "--hardness",
    "absolute",
)
OFF_TOPIC = "Plan the weekly baking schedule and the holiday rota for the bakery workers"
ON_TOPIC = "Why did the workers stop losing jobs when they reconnect?"


@pytest.fixture
def stored(run: Cli, repo: Path) -> str:
    run.json(*RULE)
    return str(run.json(*DECISION)["id"])


@pytest.mark.usefixtures("local_model")
def test_a_query_nothing_is_about_gets_no_matches_anywhere(
    app: App, run: Cli, repo: Path, stored: str
) -> None:
    assert run.json("search", OFF_TOPIC)["results"] == []
    assert "No matches" in run("search", OFF_TOPIC).stdout
    assert run.json("recall", OFF_TOPIC)["results"] == []
    (context,) = call(app, ("get_context", {"query": OFF_TOPIC}))
    assert data(context)["results"] == []
    # The prompt hook as the daemon answers it (with vectors; without a daemon the hook reads
    # by full text alone, where no floor can tell a paraphrase from an unrelated prompt).
    hooked = handle(app, "prompt", user_prompt(repo, OFF_TOPIC), None, repo)
    assert hooked == ""
    assert stored in handle(app, "prompt", user_prompt(repo, ON_TOPIC, "s2"), None, repo)
    assert [h["id"] for h in run.json("search", ON_TOPIC)["results"]][:1] == [stored]


@pytest.mark.usefixtures("local_model")
def test_the_floor_can_be_turned_off(run: Cli, home: Path, stored: str) -> None:
    config = home / "config.toml"
    config.write_text(
        config.read_text(encoding="utf-8") + "[search]\nrelevance_floor = false\n", "utf-8"
    )
    assert run.json("search", OFF_TOPIC)["results"] != []


def test_without_the_model_the_floor_was_learnt_for_every_match_is_kept(
    run: Cli, stored: str
) -> None:
    """Feature hashing's cosines are on another scale: no floor for them."""
    assert run.json("search", "names for the workers")["results"] != []
