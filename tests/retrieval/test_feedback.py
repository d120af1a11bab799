"""learn: a record marked as the answer to a query ranks first for that query and higher for
similar later ones; other queries rank as they did."""

import pytest

from contextd.app import App
from mcp import Client
from tests.conftest import Cli
from tests.mcp.test_server import payload, talk

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


DEPLOYS = [
    "Staging deploys wait for the nightly database snapshot to finish",
    "Production deploys run from the release branch after CI passes",
    "Deploys are blocked on Fridays after 3pm",
    "The deploy script waits for health checks before switching traffic",
    "Rollbacks of a production deploy use the previous container image",
    "Database migrations run before each deploy and can make deploys wait",
]
QUERY = "production deploys release branch"


def _ids(run: Cli, query: str) -> list[str]:
    return [r["id"] for r in run.json("search", query)["results"]]


@pytest.mark.usefixtures("local_model")
def test_the_learned_answer_ranks_first_for_its_own_query_with_the_real_model(run: Cli) -> None:
    ids = [run.json("add", text, "--category", "gotcha", "--force")["id"] for text in DEPLOYS]
    wanted = ids[5]  # the migrations: a record the query's words do not match at all
    paraphrase = "which branch do production deploys come from"
    others = ["how are rollbacks done", "Fridays deploy freeze"]
    before = {q: _ids(run, q) for q in [QUERY, paraphrase, *others]}
    assert before[QUERY][0] == ids[1] and before[QUERY].index(wanted) > 0
    run.json("learn", QUERY, wanted)
    for asked in (QUERY, "Production deploys, release  branch?"):
        [first, second, *_] = run.json("search", asked, "--explain")["results"]
        assert first["id"] == wanted and second["id"] == ids[1]
        assert first["score"] > second["score"] and first["explain"]["feedback"] > 0
    assert _ids(run, paraphrase).index(wanted) < before[paraphrase].index(wanted)
    for query in others:  # other queries rank as they did
        assert _ids(run, query) == before[query]


def test_with_vectors_off_the_learned_answer_still_ranks_first_for_its_query(run: Cli) -> None:
    assert run("config", "set", "embeddings.provider", "none").exit_code == 0
    ids = [run.json("add", text, "--category", "gotcha", "--force")["id"] for text in DEPLOYS]
    assert _ids(run, QUERY)[0] == ids[1]
    run.json("learn", QUERY, ids[0])
    assert _ids(run, QUERY)[:2] == [ids[0], ids[1]]


def test_an_agent_learns_over_mcp_and_its_answer_comes_first_for_that_query(
    app: App, run: Cli
) -> None:
    ids = [run.json("add", text, "--category", "gotcha", "--force")["id"] for text in DEPLOYS]

    async def body(client: Client) -> None:
        found = payload(await client.call_tool("get_context", {"query": QUERY}))["results"]
        assert found[0]["id"] == ids[1]
        learned = payload(await client.call_tool("learn", {"query": QUERY, "id": ids[5]}))
        assert learned["learned"] == ids[5]
        found = payload(await client.call_tool("get_context", {"query": QUERY}))["results"]
        assert [r["id"] for r in found[:2]] == [ids[5], ids[1]]

    talk(app, body)


def test_the_latest_answer_learned_for_a_query_comes_first_and_a_superseded_one_hands_over(
    run: Cli,
) -> None:
    ids = [run.json("add", text, "--category", "gotcha", "--force")["id"] for text in DEPLOYS]
    run.json("learn", QUERY, ids[3])
    run.json("learn", QUERY, ids[5])
    assert _ids(run, QUERY)[:2] == [ids[5], ids[3]]
    successor = run.json(
        "add", "Schema migrations block each deploy until they finish", "--category", "gotcha"
    )["id"]
    assert run("supersede", ids[5], "--by", successor).exit_code == 0
    assert _ids(run, QUERY)[:2] == [successor, ids[3]]
