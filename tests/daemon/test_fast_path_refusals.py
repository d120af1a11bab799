"""Bad input to the commands a running daemon answers (`search`, `recall`, the record
commands) gets the same sentence, exit code and output from the daemon's fast client
(contextd.client.quick) as from click's path, which CONTEXTD_DEBUG forces: one case per option
the fast client reads, real CLI processes, one real daemon, which must outlive every case."""

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from contextd.wire import to_daemon
from tests.conftest import DECISION
from tests.daemon._support import Daemons
from tests.daemon.test_served import contextd as run_client

FILE = "<a file>"  # an ordinary file where a home folder is expected
QUERY = ("search", "task queue")
NOTE = ("add", "Deploys need the VPN on release days", "--category", "gotcha")
WHY = "Kafka keeps an ordered log that every consumer can replay after it reconnects"
KAFKA = (
    "decide",
    "Use Kafka for the task queue",
    "--problem",
    "Redis pub/sub dropped tasks whenever workers reconnected during a deploy",
)
RULE = ("constrain", "Never edit an applied migration", "--hardness", "strong")
REASON = ("--reason", "Applied migrations are checksummed by the deploy tool on every run")
GOAL = ("checkpoint", "Halfway through moving the queue to NATS")
NINES = "9" * 5000  # more digits than int() reads

BAD = {
    # search and recall
    "since reaching before the year 1": ((*QUERY, "--since", "99999999d"), {}),
    "before reaching before the year 1, as JSON": (
        ("recall", "task queue", "--before", "99999999w", "--json"),
        {},
    ),
    "since of more digits than int reads": ((*QUERY, "--since", f"{NINES}d"), {}),
    "since that is no date": ((*QUERY, "--since", "the other day"), {}),
    "before that is no date": ((*QUERY, "--before", "2026-13-01"), {}),
    "by no such time": ((*QUERY, "--by", "updated"), {}),
    "kind no such kind": ((*QUERY, "--kind", "decisions"), {}),
    "flag given a value": ((*QUERY, "--mmr=yes"), {}),
    "include-archived given a value": ((*QUERY, "--include-archived=no"), {}),
    "include-superseded given a value": ((*QUERY, "--include-superseded=no"), {}),
    "explain given a value": ((*QUERY, "--explain=1"), {}),
    "limit out of range": ((*QUERY, "--limit", "0"), {}),
    "limit no number": ((*QUERY, "--limit", "ten"), {}),
    "budget under the least": (("recall", "task queue", "--budget", "10"), {}),
    "budget no number": (("recall", "task queue", "--budget", "lots"), {}),
    "query of no words": (("search", ""), {}),
    "two queries": ((*QUERY, "again"), {}),
    "project unknown, as JSON": ((*QUERY, "--project", "nosuch", "--json"), {}),
    "home a file": ((*QUERY, "--home", FILE), {}),
    "home a file, from the environment": (QUERY, {"CONTEXTD_HOME": FILE}),
    "project unknown, from the environment": (QUERY, {"CONTEXTD_PROJECT": "nosuch"}),
    # the record commands
    "category empty": (("add", "Deploys need the VPN on release days", "--category", ""), {}),
    "category not a word": ((*NOTE[:3], "Not A Category!"), {}),
    "category missing": (NOTE[:2], {}),
    "text too short": (("add", "short", "--category", "gotcha"), {}),
    "tag empty": ((*NOTE, "--tag", ""), {}),
    "priority out of range": ((*NOTE, "--priority", "0"), {}),
    "priority no number": ((*NOTE, "--priority", "high"), {}),
    "origin no such origin": ((*NOTE, "--origin", "robot"), {}),
    "related no such record": ((*NOTE, "--related", "nosuchid"), {}),
    "supersedes no such record": ((*NOTE, "--supersedes", "nosuchid"), {}),
    "private given a value": ((*NOTE, "--private=yes"), {}),
    "global given a value": ((*NOTE, "--global=yes"), {}),
    "force given a value": ((*NOTE, "--force=yes"), {}),
    "record for an unknown project": ((*NOTE, "--project", "nosuch"), {}),
    "record in a home that is a file": ((*NOTE, "--home", FILE), {}),
    "hint holding a secret": ((*NOTE, "--hint", "AKIA" + "Z7QW3ERT5YUI8OPA"), {}),
    "decision already stored": (tuple(DECISION), {}),
    "problem too short": ((*KAFKA[:2], "--problem", "too short", "--why", WHY), {}),
    "why too short": ((*KAFKA, "--why", "short"), {}),
    "tradeoffs holding a password": (
        (*KAFKA, "--why", WHY, "--tradeoffs", "db_pass = hunter22"),
        {},
    ),
    "hardness no such hardness": ((*RULE[:2], *REASON, "--hardness", "soft"), {}),
    "hardness missing": ((*RULE[:2], *REASON), {}),
    "reason too short": ((*RULE, "--reason", "short"), {}),
    "scope empty": ((*RULE, *REASON, "--scope", ""), {}),
    "purpose too short": (("pipeline", "Release", "--purpose", "short", "--step", "tag it"), {}),
    "step empty": (
        ("pipeline", "Release", "--purpose", "Ship a tagged build safely", "--step", ""),
        {},
    ),
    "step missing": (("pipeline", "Release", "--purpose", "Ship a tagged build safely"), {}),
    "goal holding a token": ((*GOAL, "--goal", "xoxb-" + "1234567890-abcdefghijKLMN"), {}),
    "next holding a key": ((*GOAL, "--next", "AKIA" + "Z7QW3ERT5YUI8OPA"), {}),
    "summary missing": (("checkpoint", ""), {}),
}


@dataclass(frozen=True)
class Served:
    home: Path
    repo: Path
    file: Path
    env: dict[str, str]


@dataclass(frozen=True)
class Printed:
    code: int
    stdout: bytes
    stderr: bytes


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One project with one decision in a home a real daemon serves, for every case."""
    root = tmp_path_factory.mktemp("served")
    home, repo, file = root / "home", root / "orbit", root / "not-a-folder"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text(
        '[embeddings]\nprovider = "hashing"\n[hooks]\nautostart_daemon = false\n', encoding="utf-8"
    )
    file.write_text("not a folder\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in {"CONTEXTD_DEBUG", "CONTEXTD_PROJECT", "XDG_RUNTIME_DIR"}
    }
    env.update(
        CONTEXTD_HOME=str(home),
        GIT_CONFIG_GLOBAL=str(root / "gitconfig"),
        GIT_CONFIG_NOSYSTEM="1",
    )
    for setup in (("attach",), tuple(DECISION)):
        done = _contextd(Served(home, repo, file, env), setup, {})
        assert done.code == 0, done.stderr
    daemons = Daemons(home, repo)
    try:
        daemons.start(env=env)
        # The fast client is answered here: the daemon serves this home and this code.
        assert run_client(repo, *QUERY, env=env, scratch=root).warm
        yield Served(home, repo, file, env)
    finally:
        daemons.shutdown()


@pytest.mark.parametrize(("argv", "env"), BAD.values(), ids=BAD.keys())
def test_bad_input_is_refused_alike_by_the_daemons_client_and_by_click(
    served: Served, argv: tuple[str, ...], env: dict[str, str]
) -> None:
    by_click = _contextd(served, argv, {**env, "CONTEXTD_DEBUG": "1"})
    assert by_click.code not in (0, 1, 70), by_click.stderr
    assert by_click.stderr.startswith((b"Error: ", b"Usage: ", b"Note: ")), by_click.stderr
    assert _contextd(served, argv, env) == by_click
    assert to_daemon.ask(str(served.home), {"kind": "ping"}) is not None  # the daemon still runs


def _contextd(served: Served, argv: tuple[str, ...], env: dict[str, str]) -> Printed:
    """`contextd ARGV` as the console script runs it, in the project's folder."""
    file = str(served.file)
    done = subprocess.run(
        [sys.executable, "-m", "contextd", *(arg.replace(FILE, file) for arg in argv)],
        capture_output=True,
        cwd=served.repo,
        env={**served.env, **{name: value.replace(FILE, file) for name, value in env.items()}},
        timeout=120,
        check=False,
    )
    return Printed(done.returncode, done.stdout, done.stderr)
