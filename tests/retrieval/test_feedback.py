"""learn: a record marked as the answer to a query ranks higher for similar later queries."""

import pytest

from tests.conftest import Cli

pytestmark = pytest.mark.usefixtures("repo")


def _store(run: Cli) -> tuple[str, str]:
    wanted = run.json(
        "add",
        "Staging deploys wait for the nightly database snapshot to finish",
        "--category",
        "gotcha",
    )["id"]
    other = run.json(
        "add",
        "Production deploys run from the release branch after CI passes",
        "--category",
        "convention",
    )["id"]
    return wanted, other


def test_a_learned_answer_moves_up_for_the_same_and_similar_queries(run: Cli) -> None:
    wanted, other = _store(run)
    query = "why do production deploys wait"
    before = [r["id"] for r in run.json("search", query)["results"]]
    assert before[0] == other
    assert run.json("learn", query, wanted[:13])["learned"] == wanted
    after = run.json("search", query, "--explain")["results"]
    assert after[0]["id"] == wanted and after[0]["explain"]["feedback"] > 0
    similar = run.json("search", "why do the production deploys wait")["results"]
    assert similar[0]["id"] == wanted


def test_an_unrelated_query_is_not_affected(run: Cli) -> None:
    wanted, other = _store(run)
    run.json("learn", "why do production deploys wait", wanted)
    unrelated = run.json("search", "release branch CI", "--explain")["results"]
    assert unrelated[0]["id"] == other
    assert all(r["explain"]["feedback"] == 0 for r in unrelated)


def test_learning_an_unknown_record_is_a_clear_error(run: Cli) -> None:
    result = run("learn", "anything at all", "0123456789ab")
    assert result.exit_code == 3 and "No record" in result.stderr
