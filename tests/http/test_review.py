"""Drafts held for review over HTTP: the person who runs the server (a home's owner, an
administrator on the team server) sees every developer's drafts, each named, in `review`
and `status`, and approves them; a developer's token sees only their own."""

import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.core.test_review_queue import at_a_terminal
from tests.http.served import cli_json, connect, new_token, result_data, run, serve, text_of

FACT = "Deploys of the billing worker go through the blue-green switch, never in place"


def _cli(home: Path, repo: Path, *args: str) -> Any:
    return cli_json(home, *args, cwd=repo)


def test_the_owner_reviews_another_developers_draft_and_approves_it(
    backend: str, home: Path, repo: Path
) -> None:
    config = home / "config.toml"
    config.write_text(
        config.read_text(encoding="utf-8") + '[capture]\nreview = "agent"\n', encoding="utf-8"
    )
    alice = new_token(home, "alice", "--project", "orbit")
    bob = new_token(home, "bob", "--project", "orbit")
    with serve(repo) as served:

        async def held() -> None:
            async with connect(served.url, alice) as client:
                said = await client.call_tool("remember", {"text": FACT, "category": "convention"})
                assert "held for review" in text_of(said).lower()
            async with connect(served.url, bob) as client:  # not his to see
                found = result_data(await client.call_tool("session_info", {}))
                assert found["session"]["developer"] == "bob"

        run(held)

    waiting = _cli(home, repo, "review")["waiting"]
    assert [(w["title"], w["developer"]) for w in waiting] == [(FACT, "alice")]
    assert _cli(home, repo, "status")["waiting_review"] == 1
    listing = subprocess.run(
        [sys.executable, "-m", "contextd", "--home", str(home), "review"],
        cwd=repo,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    ).stdout
    assert "agent, alice" in listing

    code, output = at_a_terminal(repo, "--home", str(home), "review", "approve", waiting[0]["id"])
    assert code == 0, output
    assert _cli(home, repo, "review")["waiting"] == []
    found = _cli(home, repo, "search", "blue-green switch billing worker")
    assert [hit["title"] for hit in found["results"]][:1] == [FACT]


def test_serve_follows_config_changes_and_names_those_needing_a_restart(
    home: Path, repo: Path
) -> None:
    alice = new_token(home, "alice", "--project", "orbit")
    config = home / "config.toml"
    before = config.read_text(encoding="utf-8")
    with serve(repo) as served:

        async def remember(text: str) -> str:
            async with connect(served.url, alice) as client:
                said = await client.call_tool("remember", {"text": text, "category": "convention"})
                return text_of(said).lower()

        assert "held for review" not in run(remember, FACT)
        config.write_text(before + '[capture]\nreview = "agent"\n', encoding="utf-8")
        later = "Release branches are cut on Tuesdays after the integration suite passes"
        assert "held for review" in run(remember, later)
        config.write_text(
            before + '[capture]\nreview = "agent"\n[store]\npool_size = 4\n', encoding="utf-8"
        )
        third = "Feature flags are removed within two sprints of a full rollout"
        assert "held for review" in run(remember, third)  # the rest of the change holds
    assert served.log.count("restart this process") == 1, served.log
    assert "[store]" in served.log
    assert [w["title"] for w in _cli(home, repo, "review")["waiting"]] == [later, third]
