"""End to end on the team server: the CLI and the MCP server give the same answers as on the
SQLite file; a URL with a password and an unreachable server are refused in one sentence."""

import json
import socket
from pathlib import Path

import pytest

from mcp import Client
from tests.conftest import DECISION, POSTGRES, Cli, make_repo, use_server
from tests.daemon._support import Daemons
from tests.mcp.test_server import NATS_PROBLEM, payload, serve


def _ids(found: dict[str, object]) -> list[str]:
    return [r["id"] for r in found["results"]]  # type: ignore[index, attr-defined]


def test_the_cli_records_searches_supersedes_and_reports_alike(
    run: Cli, repo: Path, backend: str
) -> None:
    nats = run.json(*DECISION)
    postgres = run.json(*POSTGRES, "--supersedes", nats["id"])
    found = run.json("search", "task queue")
    assert _ids(found) == [postgres["id"]]
    history = run.json("search", "task queue", "--include-superseded")
    assert _ids(history) == [postgres["id"], nats["id"]]
    shown = run("show", nats["id"][:13])
    assert shown.exit_code == 0 and "NOT CURRENT" in shown.stdout
    status = run.json("status")
    assert status["counts"]["decision"] == 1
    assert status["vectors"]["state"] == "ok"  # asked: pgvector on a server, SQLite at home
    where = "pgvector on the team server" if backend == "postgresql" else "store's file"
    assert where in status["vectors"]["detail"]
    checkpoint = run.json(
        "checkpoint", "Stopped before the queue migration", "--next", "write the migration"
    )
    assert run.json("status")["last_checkpoint"]["id"] == checkpoint["id"]
    inventory = run.json("inventory")
    assert inventory["projects"][0]["slug"] == "orbit"
    assert run("delete", postgres["id"]).exit_code == 0
    assert postgres["id"] not in _ids(run.json("search", "task queue"))
    config = run.json("config")
    expected = "postgresql://" if backend == "postgresql" else str(config["home"])
    assert config["database"].startswith(expected)


def test_the_mcp_server_records_and_recalls_on_either_store(repo: Path, backend: str) -> None:
    async def body(client: Client) -> None:
        decision = payload(
            await client.call_tool(
                "record_decision",
                {
                    "summary": "Use NATS JetStream for the task queue",
                    "problem": NATS_PROBLEM,
                    "why_chosen": "JetStream keeps durable consumers with acks, so a worker "
                    "that reconnects resumes where it stopped",
                },
            )
        )
        context = payload(await client.call_tool("get_context", {"query": "task queue"}))
        assert context["results"][0]["id"] == decision["id"]
        again = await client.call_tool(
            "record_decision",
            {
                "summary": "Use NATS JetStream for the task queue",
                "problem": NATS_PROBLEM,
                "why_chosen": "JetStream keeps durable consumers with acks, so a worker "
                "that reconnects resumes where it stopped",
            },
        )
        assert again.is_error and decision["id"] in again.content[0].text

    serve(repo, body)


def test_a_password_in_the_url_is_refused_without_quoting_it(run: Cli, home: Path) -> None:
    use_server(home, "postgresql://alice:hunter2secret@db.example:5432/contextd")
    result = run("status")
    assert result.exit_code == 5
    assert "PGPASSWORD" in result.stderr and "hunter2secret" not in result.output
    assert run("config", "set", "store.url", "postgresql://a:pw@h/db").exit_code == 5


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_server_refuses_writes_in_one_sentence_naming_it(
    run: Cli, home: Path, tmp_path: Path
) -> None:
    use_server(home, f"postgresql://alice@127.0.0.1:{_closed_port()}/contextd")
    result = run("add", "Deploys run from the release branch", "--category", "convention")
    assert result.exit_code == 6
    message = result.stderr.strip()
    assert message.count("\n") == 0 and "Traceback" not in result.output
    assert "127.0.0.1" in message and "writes are refused" in message


def test_store_copy_moves_a_store_to_the_server_and_back(
    run: Cli, home: Path, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "orbit", "git@github.com:acme/orbit.git")
    monkeypatch.chdir(repo)
    assert run("attach").exit_code == 0
    first = run.json(*DECISION)
    run.json(*POSTGRES, "--supersedes", first["id"])
    run.json("session", "start", "--agent", "claude-code")
    run.json("token", "create", "alice-laptop", "--developer", "alice")
    copied = run.json("store", "copy", "--to", pg_url)
    assert copied["copied"]["records"] == 2 and copied["copied"]["projects"] == 1
    assert copied["copied"]["embeddings"] == 2 and copied["copied"]["sessions"] == 1
    again = run("store", "copy", "--to", pg_url)  # not empty any more: refused, untouched
    assert again.exit_code == 4 and "already holds" in again.stderr

    server_home = tmp_path / "server-home"
    server_home.mkdir(mode=0o700)
    (server_home / "config.toml").write_text(
        (home / "config.toml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    use_server(server_home, pg_url)
    on_server = run.json("--home", str(server_home), "search", "task queue")
    assert _ids(on_server) == [_ids(run.json("search", "task queue"))[0]]
    back = tmp_path / "back" / "contextd.db"
    returned = run.json("--home", str(server_home), "store", "copy", "--to", str(back))
    assert returned["copied"] == copied["copied"]
    restored = tmp_path / "restored"
    restored.mkdir(mode=0o700)
    (restored / "config.toml").write_text('[embeddings]\nprovider = "hashing"\n', encoding="utf-8")
    back.rename(restored / "contextd.db")
    assert (
        run.json("--home", str(restored), "search", "task queue", "--include-superseded")["results"]
        == run.json("search", "task queue", "--include-superseded")["results"]
    )
    # Every column both stores keep crosses, both ways: a token still acts for its developer.
    for where in (server_home, restored):
        tokens = run.json("--home", str(where), "token", "list")["tokens"]
        assert [(t["name"], t["developer"]) for t in tokens] == [("alice-laptop", "alice")]


@pytest.mark.parametrize("target", ["postgresql://u:hunter2pw@h/db", "mysql://u@h/db"])
def test_store_copy_refuses_a_bad_target_in_one_sentence(run: Cli, repo: Path, target: str) -> None:
    result = run("store", "copy", "--to", target)
    assert result.exit_code == 2 and "hunter2pw" not in result.output
    assert json.dumps(result.stderr).count("\\n") == 1


def test_hooks_fail_open_fast_when_the_server_is_unreachable(home: Path, tmp_path: Path) -> None:
    from tests.hooks._support import run_hook, session_start, user_prompt

    use_server(home, f"postgresql://alice@127.0.0.1:{_closed_port()}/contextd")
    repo = make_repo(tmp_path / "orbit", "git@github.com:acme/orbit.git")
    for event, given, budget in (
        ("session-start", session_start(repo), 10.0),
        ("prompt", user_prompt(repo, "how do the queue workers get deployed these days"), 4.0),
    ):
        ran = run_hook(event, given, cwd=repo)
        assert ran.returncode == 0 and ran.stdout == b"", ran.stderr
        assert ran.elapsed < budget + 1.0  # the hook's budget counts from its start
    log = (home / "hook.log").read_text(encoding="utf-8")
    assert "Cannot reach the contextd server at postgresql://alice@127.0.0.1" in log


def test_the_daemon_answers_prompts_from_the_server(run: Cli, repo: Path, daemons: Daemons) -> None:
    from tests.hooks._support import run_hook, user_prompt

    run.json(*DECISION)
    daemons.start()
    ran = run_hook(
        "prompt", user_prompt(repo, "why did we pick a new task queue for the workers"), cwd=repo
    )
    assert ran.returncode == 0
    assert "Use NATS for the task queue" in ran.context


def test_eval_on_the_server_scores_like_sqlite_and_leaves_the_team_store_untouched(
    run: Cli, repo: Path, backend: str, tmp_path: Path, home: Path
) -> None:
    from tests.cli.test_eval import CORPUS, QUERIES, _write

    folder = tmp_path / "dataset"
    _write(folder, "corpus.jsonl", CORPUS)
    _write(folder, "queries.jsonl", QUERIES)
    run.json(*DECISION)
    overall = run.json("eval", str(folder))["overall"]
    assert (overall["hit@5"], overall["stale@5"], overall["leak@5"]) == (1.0, 0, 0)
    assert [p["slug"] for p in run.json("inventory")["projects"]] == ["orbit"]
    if backend == "postgresql":
        import psycopg

        url = (home / "config.toml").read_text(encoding="utf-8").split('url = "')[1].split('"')[0]
        with psycopg.connect(url) as conn:
            left = conn.execute(
                "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'contextd_scratch_%'"
            ).fetchone()
        assert left == (0,)
