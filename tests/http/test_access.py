"""Who may call `contextd serve`: a bearer token per developer, refused with 401 when it is
missing, made up, revoked or expired; read-only tokens get the read tools only; a browser
page from another origin is refused; and two developers' sessions and personal records stay
apart. Real serve processes, the SDK's Streamable HTTP client, on both stores."""

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.http.served import cli_json, connect, new_token, result_data, run, serve, text_of

READ_ONLY_TOOLS = {
    "get_project_summary",
    "get_context",
    "search",
    "get_entry",
    "prune_stale",
    "verify_quality",
    "session_info",
    "get_compaction_report",
}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
ACCEPT = {"accept": "application/json, text/event-stream"}


def _post(url: str, token: str | None, **headers: str) -> httpx.Response:
    sent = {**ACCEPT, **headers}
    if token is not None:
        sent["authorization"] = f"Bearer {token}"
    return httpx.post(url, json=INIT, headers=sent, timeout=30)


def test_only_a_live_token_gets_in(backend: str, home: Path, repo: Path) -> None:
    good = new_token(home, "alice")
    revoked = new_token(home, "bob")
    expiring = new_token(home, "carol", "--expires", "1s")
    made_up = "ctd_" + "a" * 12 + "_" + "b" * 43
    with serve(repo) as served:
        assert _post(served.url, good).status_code == 200
        subprocess.run(
            [sys.executable, "-m", "contextd", "token", "revoke", "bob"],
            check=True,
            capture_output=True,
        )
        time.sleep(1.1)  # carol's token has run out
        for token in (None, made_up, "not-even-the-shape", revoked, expiring):
            answer = _post(served.url, token)
            assert answer.status_code == 401, (token, answer.text)
            challenge = answer.headers["www-authenticate"]
            assert challenge.startswith("Bearer ")
            assert "resource_metadata=" in challenge
            assert ("invalid_token" in challenge) == (token is not None)
            assert "token" in answer.json()["error"]
        # the token is never echoed back, in a refusal or anywhere
        assert good not in _post(served.url, good[:-1] + "x").text
        metadata = httpx.get(
            served.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
        )
        assert metadata.json()["resource"] == served.url
        assert metadata.json()["bearer_methods_supported"] == ["header"]

        async def with_sdk() -> None:
            async with connect(served.url, good) as client:
                assert {t.name for t in (await client.list_tools()).tools} >= READ_ONLY_TOOLS

        run(with_sdk)
        refused_sdk = False
        try:

            async def without() -> None:
                async with connect(served.url, made_up) as client:
                    await client.list_tools()

            run(without)
        except Exception:  # the SDK raises on a 401 (its own exception group)
            refused_sdk = True
        assert refused_sdk
    assert good not in served.log and made_up not in served.log


def test_a_browser_page_from_another_origin_is_refused(home: Path, repo: Path) -> None:
    token = new_token(home, "alice")
    with serve(repo) as served:
        answer = _post(served.url, token, origin="https://evil.example")
        assert answer.status_code == 403
        assert "allowed_origins" in answer.json()["error"]
        assert "access-control-allow-origin" not in answer.headers
        preflight = httpx.options(
            served.url,
            headers={"origin": "https://evil.example", "access-control-request-method": "POST"},
        )
        assert preflight.status_code == 403
        assert "access-control-allow-origin" not in preflight.headers
        assert _post(served.url.replace("/mcp", "/other"), token).status_code == 404


def test_a_read_only_token_gets_only_the_read_tools(backend: str, home: Path, repo: Path) -> None:
    reader = new_token(home, "rita", "--read-only", "--project", "orbit")
    writer = new_token(home, "will", "--project", "orbit")
    with serve(repo) as served:

        async def body() -> None:
            async with connect(served.url, reader) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                assert names == READ_ONLY_TOOLS
                refused = await client.call_tool(
                    "remember", {"text": "a reader cannot store this", "category": "gotcha"}
                )
                assert refused.is_error
            async with connect(served.url, writer) as client:
                stored = await client.call_tool(
                    "remember",
                    {
                        "text": "Writers store over HTTP in the token's project",
                        "category": "gotcha",
                    },
                )
                assert result_data(stored)["id"]
            async with connect(served.url, reader) as client:
                found = await client.call_tool("get_context", {"query": "writers store over HTTP"})
                assert "Writers store over HTTP" in text_of(found)
                assert "<project-memory>" in text_of(found)

        run(body)


def test_two_developers_keep_their_sessions_and_checkpoints_apart(
    backend: str, home: Path, repo: Path
) -> None:
    alice = new_token(home, "alice", "--project", "orbit")
    bob = new_token(home, "bob", "--project", "orbit")
    with serve(repo) as served:

        async def body() -> None:
            async with connect(served.url, alice) as client:
                mine = result_data(
                    await client.call_tool(
                        "checkpoint",
                        {"summary": "Alice stopped halfway through the billing migration"},
                    )
                )
                info = result_data(await client.call_tool("session_info", {}))
                alice_session = info["session"]["id"]
                assert info["session"]["developer"] == "alice"
            async with connect(served.url, bob) as client:
                theirs = await client.call_tool("get_entry", {"id": mine["id"]})
                assert theirs.is_error
                found = await client.call_tool("search", {"query": "billing migration halfway"})
                assert "Alice stopped" not in text_of(found)
                info = result_data(await client.call_tool("session_info", {}))
                assert info["session"]["id"] != alice_session
                assert info["session"]["developer"] == "bob"
                ended = result_data(await client.call_tool("end_session", {"summary": "bob done"}))
                assert ended["id"] == info["session"]["id"]
            async with connect(served.url, alice) as client:
                info = result_data(await client.call_tool("session_info", {}))
                assert info["session"]["id"] == alice_session  # still open: bob ended his own
                assert info["session"]["ended_at"] is None
                again = result_data(await client.call_tool("get_entry", {"id": mine["id"]}))
                assert again["title"].startswith("Alice stopped")

        run(body)


@pytest.mark.parametrize("flag", ["--read-only"])
def test_serve_read_only_serves_the_read_tools_to_every_token(
    flag: str, home: Path, repo: Path
) -> None:
    token = new_token(home, "alice")
    with serve(repo, flag) as served:

        async def body() -> None:
            async with connect(served.url, token) as client:
                assert {t.name for t in (await client.list_tools()).tools} == READ_ONLY_TOOLS

        run(body)


def test_two_tokens_of_one_developer_see_the_same_personal_records(
    backend: str, home: Path, repo: Path
) -> None:
    laptop = new_token(home, "alice-laptop", "--developer", "alice", "--project", "orbit")
    desktop = new_token(home, "alice-desktop", "--developer", "alice", "--project", "orbit")
    bob = new_token(home, "bob", "--project", "orbit")
    tokens = subprocess.run(
        [sys.executable, "-m", "contextd", "--home", str(home), "token", "list", "--json"],
        capture_output=True,
        check=True,
    )
    listed = {t["name"]: t["developer"] for t in json.loads(tokens.stdout)["tokens"]}
    assert listed == {"alice-desktop": "alice", "alice-laptop": "alice", "bob": "bob"}
    with serve(repo) as served:

        async def body() -> None:
            async with connect(served.url, laptop) as client:
                mine = result_data(
                    await client.call_tool(
                        "checkpoint", {"summary": "Alice stopped halfway through the billing move"}
                    )
                )
                info = result_data(await client.call_tool("session_info", {}))
                assert info["session"]["developer"] == "alice"
            async with connect(served.url, desktop) as client:
                again = result_data(await client.call_tool("get_entry", {"id": mine["id"]}))
                assert again["title"].startswith("Alice stopped")
                info = result_data(await client.call_tool("session_info", {}))
                assert info["session"]["developer"] == "alice"
            async with connect(served.url, bob) as client:
                assert (await client.call_tool("get_entry", {"id": mine["id"]})).is_error

        run(body)


def test_the_owners_own_records_stay_hidden_from_another_developers_token(
    backend: str, home: Path, repo: Path
) -> None:
    """What the store's owner keeps personal on the CLI (a private record, a global
    preference, a checkpoint) is theirs on either store: another developer's token reads
    none of it over HTTP; the owner's own token reads it all."""
    owner = _cli_developer(home, repo)
    written = [
        _add(home, repo, "add", PRIVATE, "--private", "--category", "gotcha"),
        _add(home, repo, "add", PREFERENCE, "--global", "--category", "preference"),
        _add(home, repo, "checkpoint", CHECKPOINT),
    ]
    other = new_token(home, "alice", "--project", "orbit")
    own = new_token(home, "owner-laptop", "--developer", owner, "--project", "orbit")
    with serve(repo) as served:

        async def body() -> None:
            async with connect(served.url, other) as client:
                for record_id in written:
                    assert (await client.call_tool("get_entry", {"id": record_id})).is_error
                seen = [
                    await client.call_tool("search", {"query": "interview notes payments retry"}),
                    await client.call_tool("get_context", {"query": "payments retry terse diff"}),
                    await client.call_tool("get_project_summary", {}),
                ]
                shown = "\n".join(text_of(result) for result in seen)
                for text in (PRIVATE, PREFERENCE, CHECKPOINT):
                    assert text[:40] not in shown
            async with connect(served.url, own) as client:
                for record_id in written:
                    result_data(await client.call_tool("get_entry", {"id": record_id}))

        run(body)


PRIVATE = "The owner keeps interview notes about the payments team in the scratch branch"
PREFERENCE = "The owner prefers terse answers with the diff first and no summary after it"
CHECKPOINT = "Stopped halfway through the payments retry rewrite of the billing worker"


def _cli_developer(home: Path, repo: Path) -> str:
    """Who the store's owner is, as a token names them: the login role on the team server,
    the login name in a home."""
    config = (home / "config.toml").read_text(encoding="utf-8")
    if "postgresql://" in config:
        from urllib.parse import urlsplit

        url = config.split('url = "', 1)[1].split('"', 1)[0]
        return str(urlsplit(url).username)
    import getpass

    return getpass.getuser()


def _add(home: Path, repo: Path, *args: str) -> str:
    record_id = cli_json(home, *args, cwd=repo)["id"]
    assert isinstance(record_id, str)
    return record_id


def test_a_session_over_http_is_named_after_the_client_not_its_http_library(
    home: Path, repo: Path
) -> None:
    """The client says its name once, at `initialize`, a request of its own; the requests after
    it carry only the HTTP library's User-Agent."""
    token = new_token(home, "alice", "--project", "orbit")
    with serve(repo) as served:

        async def body() -> None:
            async with connect(served.url, token, name="orbit-agent") as client:
                info = result_data(await client.call_tool("session_info", {}))
                assert info["session"]["agent"] == "orbit-agent"

        run(body)
