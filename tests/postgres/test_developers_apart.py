"""Two developers on one team server, with the team page's roles: each one's sessions, private
records, global preferences and checkpoints are theirs alone. Bob sees and changes the team's
records, never Alice's own: not in a search, a list, a briefing, `show`, `status`, a bundle
or a copy of the store, and he cannot end her session. Tokens for `contextd serve` are
administered by a member of the owner role (Alice): Bob makes, lists and revokes only his
own, through contextd and through plain SQL alike."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import Result

from contextd.cli.main import cli
from tests.conftest import DECISION, Cli, make_repo
from tests.pg_cluster import PASSWORD, Cluster
from tests.postgres.team import Team, team_server


class Developer:
    """One developer's CLI: their own home, on the team server as their own login role."""

    def __init__(self, run: Cli, home: Path) -> None:
        self._run = run
        self.home = home

    def __call__(self, *args: str) -> Result:
        return self._run(*args, "--home", str(self.home))

    def hook(self, event: str, payload: dict[str, object]) -> str:
        """What the agent's hook prints (the hook finds its home in CONTEXTD_HOME)."""
        result = self._run.runner.invoke(
            cli, ["hook", event], input=json.dumps(payload), env={"CONTEXTD_HOME": str(self.home)}
        )
        assert result.exit_code == 0, result.output
        return result.stdout

    def json(self, *args: str) -> Any:
        result = self(*args, "--json")
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)


@pytest.fixture
def team(pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> Iterator[Team]:
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    with team_server(pg_cluster) as server:
        yield server


def _developer(run: Cli, tmp_path: Path, team: Team, role: str) -> Developer:
    home = tmp_path / f"home-{role}"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text(
        '[embeddings]\nprovider = "hashing"\n[hooks]\nautostart_daemon = false\n'
        f'[store]\nurl = "{team.url(role)}"\n',
        encoding="utf-8",
    )
    developer = Developer(run, home)
    assert developer("attach").exit_code == 0
    return developer


@pytest.fixture
def pair(
    run: Cli, tmp_path: Path, team: Team, monkeypatch: pytest.MonkeyPatch
) -> tuple[Developer, Developer]:
    repo = make_repo(tmp_path / "orbit", "git@github.com:acme/orbit.git")
    monkeypatch.chdir(repo)
    alice = _developer(run, tmp_path, team, "alice")  # migrates, as a member of the owner
    return alice, _developer(run, tmp_path, team, "bob")


PRIVATE = "Alice keeps her interview notes about the payments team in the scratch branch"
PREFERENCE = "Alice prefers terse answers with the diff first and no summary of it after"
CHECKPOINT = "Stopped halfway through the payments retry rewrite of the billing worker"


def _alices_own(alice: Developer) -> dict[str, str]:
    """Alice's team decision, and what is hers: a private note, a global preference, a
    checkpoint made outside any session, and an open session."""
    ids = {"team": alice.json(*DECISION)["id"]}
    ids["private"] = alice.json("add", PRIVATE, "--private", "--category", "gotcha")["id"]
    ids["preference"] = alice.json("add", PREFERENCE, "--global", "--category", "preference")["id"]
    ids["checkpoint"] = alice.json("checkpoint", CHECKPOINT, "--next", "finish the retry")["id"]
    ids["session"] = alice.json("session", "start", "--agent", "claude-code")["session"]["id"]
    return ids


def _everything_bob_reads(bob: Developer, ids: dict[str, str]) -> str:
    """Every surface's text for Bob, as one string."""
    seen = [
        bob("search", "payments interview notes retry terse diff").stdout,
        bob("search", "payments", "--kind", "checkpoint").stdout,
        bob("recall", "payments retry interview preferences").stdout,
        bob("memories", "--json").stdout,
        bob("status", "--json").stdout,
        bob("inventory", "--json").stdout,
        bob("session", "list", "--all-projects", "--json").stdout,
        bob("bundle", "export", "--out", "-").stdout,
        bob.hook("session-start", {"cwd": str(Path.cwd())}),
    ]
    return "\n".join(seen)


def test_bob_sees_the_team_s_records_and_none_of_alice_s_own(
    pair: tuple[Developer, Developer],
) -> None:
    alice, bob = pair
    ids = _alices_own(alice)
    seen = _everything_bob_reads(bob, ids)
    assert ids["team"] in seen
    for mine in ("private", "preference", "checkpoint", "session"):
        assert ids[mine] not in seen, mine
    for text in (PRIVATE, PREFERENCE, CHECKPOINT):
        assert text not in seen
    for mine in ("private", "preference", "checkpoint"):
        shown = bob("show", ids[mine])
        assert shown.exit_code == 3, shown.output
        assert bob("show", ids[mine][:-2]).exit_code == 3  # nor by a prefix
        assert bob("update", ids[mine], "--title", "Bob was here and rewrote it").exit_code == 3
        assert bob("delete", ids[mine]).exit_code == 3
    assert bob("session", "show", ids["session"]).exit_code == 3

    # Alice still has all of it, unchanged.
    assert alice.json("show", ids["private"])["title"] == PRIVATE
    assert alice.json("status")["last_checkpoint"]["id"] == ids["checkpoint"]
    assert ids["preference"] in alice("memories", "--json").stdout


def test_bob_cannot_end_alice_s_open_session(pair: tuple[Developer, Developer]) -> None:
    alice, bob = pair
    session = alice.json("session", "start", "--agent", "claude-code")["session"]["id"]
    ended = bob("session", "end", "Bob says it is all done", "--id", session)
    assert ended.exit_code == 3, ended.output
    assert bob("session", "end", "Bob says it is all done").exit_code == 3  # he has none open
    mine = alice.json("session", "show", session)
    assert mine["session"]["ended_at"] is None and mine["session"]["summary"] is None
    ended = alice.json("session", "end", "the parser is done")
    assert ended["session"]["summary"] == "the parser is done"


def test_a_copy_of_the_store_holds_what_its_developer_may_see(
    pair: tuple[Developer, Developer], tmp_path: Path
) -> None:
    alice, bob = pair
    ids = _alices_own(alice)
    bob_copy = tmp_path / "bob-backup.db"
    assert bob("store", "copy", "--to", str(bob_copy)).exit_code == 0
    alice_copy = tmp_path / "alice-backup.db"
    assert alice("store", "copy", "--to", str(alice_copy)).exit_code == 0

    import sqlite3

    def held(path: Path) -> set[str]:
        with sqlite3.connect(path) as conn:
            return {
                r[0] for r in conn.execute("SELECT id FROM records UNION SELECT id FROM sessions")
            }

    assert ids["team"] in held(bob_copy)
    assert not {ids[k] for k in ("private", "preference", "checkpoint", "session")} & held(bob_copy)
    assert {ids[k] for k in ids} <= held(alice_copy)


def test_bob_manages_only_his_own_tokens_and_plain_sql_cannot_do_more(
    pair: tuple[Developer, Developer], team: Team
) -> None:
    alice, bob = pair
    alice.json("token", "create", "alice")
    alice.json("token", "create", "carol-ci", "--developer", "carol")  # an administrator may
    assert bob.json("token", "create", "bob-laptop")["developer"] == "bob"  # himself, by default

    minted = bob("token", "create", "sneaky", "--developer", "alice")
    assert minted.exit_code == 6, minted.output
    assert "Only an administrator" in minted.output and "leave out --developer" in minted.output
    assert [t["name"] for t in bob.json("token", "list")["tokens"]] == ["bob-laptop"]
    assert {t["name"] for t in alice.json("token", "list")["tokens"]} == {
        "alice",
        "carol-ci",
        "bob-laptop",
    }
    revoked = bob("token", "revoke", "alice")
    assert revoked.exit_code == 3 and "No token of yours" in revoked.output
    taken = bob("token", "create", "alice")  # a name in use, though he cannot see it
    assert taken.exit_code != 0 and "Traceback" not in taken.output, taken.output
    assert "in use" in taken.output

    with psycopg.connect(team.url("bob"), autocommit=True) as conn:
        assert conn.execute("SELECT name FROM http_tokens").fetchall() == [("bob-laptop",)]
        gone = conn.execute("UPDATE http_tokens SET revoked_at = 'now' WHERE name = 'alice'")
        assert gone.rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO http_tokens(name, developer, lookup, secret_hash, created_at) "
                "VALUES ('forged', 'alice', 'abcdefabcdef', 'x', 'now')"
            )
    states = {t["name"]: t["state"] for t in alice.json("token", "list")["tokens"]}
    assert states == {"alice": "active", "carol-ci": "active", "bob-laptop": "active"}
    assert alice.json("token", "revoke", "bob-laptop")["token"]["state"] == "revoked"
