"""`contextd search|recall` answered by a running daemon: real daemon processes, real CLI
processes, and the same bytes on stdout and stderr as without the daemon. Errors are reported
by the in-process command, in its own words, whether or not a daemon runs."""

import fcntl
import json
import os
import pty
import shutil
import signal
import struct
import subprocess
import sys
import termios
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

import contextd as contextd_package
from contextd.wire import to_daemon
from tests.conftest import DECISION, POSTGRES, Cli, make_repo
from tests.daemon._support import Daemons, wait_gone
from tests.hooks._support import hook_env

# `contextd ARGS`, as the console script runs it, noting which modules the process imported.
CLIENT = (
    "import atexit, os, sys\n"
    "out = os.environ['CONTEXTD_TEST_MODULES']\n"
    "names = lambda: '\\n'.join(sorted(sys.modules))\n"
    "atexit.register(lambda: open(out, 'w', encoding='utf-8').write(names()))\n"
    "sys.argv[0] = 'contextd'\n"
    "from contextd.__main__ import main\n"
    "main()\n"
)
BILLING = [
    "decide",
    "Round invoices half up to whole cents",
    "--problem",
    "Invoice totals differed by a cent between the ledger and the PDF",
    "--why",
    "One rounding rule, applied once when the invoice is issued, keeps every copy equal",
]


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: bytes
    stderr: bytes
    modules: frozenset[str]

    @property
    def warm(self) -> bool:
        """Answered by the daemon: this process never loaded the store or click."""
        return not {"contextd.app", "click", "numpy"} & self.modules

    @property
    def printed(self) -> tuple[int, bytes, bytes]:
        return self.code, self.stdout, self.stderr


def contextd(
    cwd: Path, *args: str, env: dict[str, str] | None = None, scratch: Path | None = None
) -> Ran:
    modules = (scratch or cwd.parent) / f"modules-{uuid.uuid4().hex}"
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, *args],
        capture_output=True,
        cwd=cwd,
        env={**(env or hook_env()), "CONTEXTD_TEST_MODULES": str(modules)},
        timeout=120,
        check=False,
    )
    loaded = frozenset(modules.read_text(encoding="utf-8").split("\n"))
    modules.unlink()
    return Ran(done.returncode, done.stdout, done.stderr, loaded)


ANSWERED = [
    ("search", "task queue"),
    ("search", "task queue", "--json"),
    ("--json", "recall", "why NATS for the task queue"),
    ("recall", "why NATS for the task queue", "--explain", "--budget", "120"),
    ("search", "zzzz nothing like it"),
    ("search", "--kind=decision", "task", "--tag", "queue", "--limit=3", "--explain"),
    ("--home", "../home", "search", "queue", "--since", "30d", "--mmr", "--include-superseded"),
    ("search", "--", "--task queue"),
    ("recall", "task queue", "--since", "30d", "--by", "verified"),
    ("search", "task queue", "--path", "src/queue/worker.py", "--json"),
]
# Refused by contextd (exit 2), in the same words: a date the request cannot hold is refused
# by the fast client before it asks (with or without a daemon), a budget by the daemon.
NOT_A_DATE = [
    ("search", "task queue", "--since", "the other day"),
    ("search", "task queue", "--json", "--since", "soon"),  # the error as JSON
]
REFUSED_BY_CONTEXTD = [*NOT_A_DATE, ("recall", "task queue", "--budget", "10")]
REFUSED_BY_CLICK = [
    ("search", "task queue", "--limit", "0"),  # a usage error
    ("search", "task queue", "--kind", "decisions"),  # no such kind
    ("search", "task queue", "--by", "updated"),  # no such time
    ("search", "--help"),
]
VARIANTS = ANSWERED + REFUSED_BY_CONTEXTD + REFUSED_BY_CLICK


def test_search_and_recall_print_the_same_with_and_without_the_daemon(
    daemons: Daemons, repo: Path, run: Cli
) -> None:
    nats = run.json(*DECISION)["id"]
    run.json(*POSTGRES)
    cold = [contextd(repo, *variant) for variant in VARIANTS]
    assert [ran.warm for ran in cold] == [variant in NOT_A_DATE for variant in VARIANTS]
    assert cold[0].code == 0 and nats.encode() in cold[1].stdout
    assert {ran.code for ran in cold} == {0, 2}
    daemons.start()
    for variant, before in zip(VARIANTS, cold, strict=True):
        after = contextd(repo, *variant)
        assert after.warm == (variant not in REFUSED_BY_CLICK), variant
        assert after.printed == before.printed, variant
    # A record written now is in the daemon's next answer.
    made = run.json(
        "decide",
        "Keep worker heartbeats at five seconds",
        "--problem",
        "Stalled workers held their tasks for minutes",
        "--why",
        "Five seconds notices a dead worker quickly without flooding the broker",
    )
    fresh = contextd(repo, "search", "worker heartbeats", "--json")
    assert fresh.warm and json.loads(fresh.stdout)["results"][0]["id"] == made["id"]


def test_the_project_is_the_one_of_the_clients_folder(
    daemons: Daemons, repo: Path, run: Cli, tmp_path: Path
) -> None:
    nats = run.json(*DECISION)["id"]
    billing = make_repo(tmp_path / "billing", "git@github.com:acme/billing.git")
    assert contextd(billing, "attach").code == 0
    invoice = json.loads(contextd(billing, *BILLING, "--json").stdout)["id"]
    loose = tmp_path / "loose"
    loose.mkdir()
    asks = [
        (repo, {}),
        (billing, {}),
        (loose, {}),  # no project here: the same error either way
        (loose, {"CONTEXTD_PROJECT": "billing"}),
    ]
    query = ("search", "task queue invoices rounding", "--json")
    cold = [contextd(folder, *query, env=hook_env(**extra)) for folder, extra in asks]
    daemons.start()
    warm = [contextd(folder, *query, env=hook_env(**extra)) for folder, extra in asks]
    for before, after in zip(cold, warm, strict=True):
        assert after.printed == before.printed
    assert all(ran.warm for ran in warm)  # the error too: the daemon's refusal, in CLI words
    found = [{hit["id"] for hit in json.loads(ran.stdout)["results"]} for ran in warm[:2]]
    assert found == [{nats}, {invoice}]
    assert warm[2].code == 3 and f"attached at {loose}".encode() in warm[2].stderr
    assert {hit["id"] for hit in json.loads(warm[3].stdout)["results"]} == {invoice}


@pytest.mark.parametrize("encoding", ["latin-1", "ascii:backslashreplace", "ascii", "utf-16"])
def test_the_clients_output_encoding_is_kept(
    daemons: Daemons, repo: Path, run: Cli, encoding: str
) -> None:
    run.json(
        "decide",
        "Café orders — déploiement du lundi",
        "--problem",
        "Kaffee für alle, même le week-end, et le café était froid",
        "--why",
        "Les déploiements du lundi laissent la semaine pour corriger ce qui casse — sûr",
    )
    env = hook_env(PYTHONIOENCODING=encoding)
    queries = [("search", "café déploiement"), ("recall", "café déploiement", "--json")]
    cold = [contextd(repo, *query, env=env) for query in queries]
    daemons.start()
    for query, before in zip(queries, cold, strict=True):
        after = contextd(repo, *query, env=env)
        assert after.printed == before.printed, query
        assert after.warm, query  # the daemon answers whatever the console's encoding
    if encoding == "latin-1":  # it cannot hold the dash: both print a plain one, never fail
        assert "Café orders - déploiement".encode("latin-1") in cold[0].stdout


def _on_terminal(cwd: Path, columns: int, *args: str) -> tuple[bytes, Ran]:
    """Run the client with stdout and stderr on a terminal `columns` wide."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    modules = cwd.parent / f"modules-{uuid.uuid4().hex}"
    env = hook_env(COLUMNS=None, LINES=None, CONTEXTD_TEST_MODULES=str(modules))
    with subprocess.Popen(
        [sys.executable, "-c", CLIENT, *args],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        cwd=cwd,
        env=env,
    ) as process:
        os.close(slave)
        output = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the process closed the terminal
                break
            if not chunk:
                break
            output += chunk
        process.wait(60)
    os.close(master)
    loaded = frozenset(modules.read_text(encoding="utf-8").split("\n"))
    return output, Ran(process.returncode, output, b"", loaded)


def test_a_terminal_gets_the_same_colours_width_and_order(
    daemons: Daemons, repo: Path, run: Cli
) -> None:
    run.json(*DECISION)
    run.json(*POSTGRES)
    asks = [("search", "task queue"), ("recall", "task queue")]  # recall's footer on stderr
    cold = [_on_terminal(repo, 50, *ask)[0] for ask in asks]
    assert b"\x1b[" in cold[0]  # coloured
    assert "…".encode() in cold[0]  # titles clipped to the width
    daemons.start()
    for ask, before in zip(asks, cold, strict=True):
        after, ran = _on_terminal(repo, 50, *ask)
        assert ran.warm and after == before, ask
    # Piped, the same command is plain text.
    assert b"\x1b[" not in contextd(repo, "search", "task queue").stdout


def test_a_daemon_that_cannot_answer_leaves_the_command_to_the_client(
    daemons: Daemons, repo: Path, run: Cli, home: Path, tmp_path: Path
) -> None:
    run.json(*DECISION)
    query = ("recall", "task queue", "--json")
    cold = contextd(repo, *query)
    alias = tmp_path / "alias"  # the same store by another name: the same daemon serves it
    alias.symlink_to(home)
    daemons.start()
    assert contextd(repo, *query).warm
    by_alias = contextd(repo, "--home", str(alias), *query)
    assert by_alias.warm and by_alias.printed == cold.printed

    # CONTEXTD_DEBUG asks for what only the in-process CLI shows.
    assert not contextd(repo, *query, env=hook_env(CONTEXTD_DEBUG="1")).warm

    # Settings changed since the daemon started: the client answers with the new ones, and
    # the daemon, which no longer matches its config, stops.
    pid = int(json.loads(contextd(repo, "daemon", "status", "--json").stdout)["pid"])
    config = home / "config.toml"
    config.write_text(
        config.read_text(encoding="utf-8") + "[context]\nmax_context_tokens = 1234\n",
        encoding="utf-8",
    )
    changed = contextd(repo, *query)
    assert not changed.warm and json.loads(changed.stdout)["budget"] == 1234
    assert wait_gone(pid, 10)
    assert "config.toml changed" in (home / "daemon.log").read_text(encoding="utf-8")

    # A daemon that died leaves a socket nobody answers: the client works alone.
    pid = int(daemons.start()["pid"])
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid, 10)
    assert (home / "daemon.sock").is_socket()
    orphaned = contextd(repo, *query)
    assert not orphaned.warm and orphaned.code == 0


def test_a_daemon_running_other_contextd_code_is_not_trusted(
    daemons: Daemons, repo: Path, run: Cli, home: Path, tmp_path: Path
) -> None:
    nats = run.json(*DECISION)["id"]
    older = tmp_path / "older"
    package = Path(contextd_package.__file__).parent
    shutil.copytree(package, older / "contextd", ignore=shutil.ignore_patterns("__pycache__"))
    daemons.start(env=hook_env(PYTHONPATH=str(older)))
    answered = contextd(repo, "search", "task queue", "--json")
    assert not answered.warm and answered.code == 0
    assert nats in answered.stdout.decode()
    assert "other contextd code" in (home / "daemon.log").read_text(encoding="utf-8")


def test_the_daemon_answers_typed_requests_and_nothing_else(
    daemons: Daemons, repo: Path, run: Cli, home: Path
) -> None:
    daemons.start()
    base = {
        "home": str(home),
        "stamp": to_daemon.code_stamp(),
        "project": None,
        "folder": str(repo),
    }
    # No kind writes, and no request carries an argv or an environment to replay.
    for asked in (
        {"kind": "add", **base, "text": "note"},
        {"kind": "cli", **base, "argv": ["add", "note"]},
        {"kind": "search", **base, "query": {"text": "q"}, "env": {"CONTEXTD_HOME": "/x"}},
    ):
        assert to_daemon.ask(str(home), asked) is None, asked
    assert run.json("memories")["records"] == []
    found = to_daemon.ask(str(home), {"kind": "search", **base, "query": {"text": "task queue"}})
    assert found is not None and found[0]["answer"]["hits"] == []


def test_writes_are_stored_by_the_daemon_with_the_same_rules_and_output(
    daemons: Daemons, repo: Path, run: Cli, home: Path
) -> None:
    cold = contextd(repo, *BILLING)
    assert cold.code == 0 and b"Recorded decision" in cold.stdout
    daemons.start()
    decide = [
        "decide",
        "Keep worker heartbeats at five seconds",
        "--problem",
        "Stalled workers held their tasks for minutes before anyone noticed them",
        "--why",
        "Five seconds notices a dead worker quickly without flooding the broker with pings",
    ]
    warm = contextd(repo, *decide, "--json")
    assert warm.code == 0, warm.stderr
    assert warm.warm  # no click, no store, no model: the daemon parsed nothing, stored it all
    stored = json.loads(warm.stdout)
    assert stored["title"] == decide[1] and stored["project_id"] is not None
    assert stored["id"] in {r["id"] for r in run.json("memories")["records"]}
    text = contextd(
        repo, "add", "Deploys happen from the release branch only", "--category", "convention"
    )
    assert text.code == 0 and text.stdout.startswith(b"Recorded memory ") and text.warm
    # The similar records the daemon's one neighbour search found are reported too.
    similar = ["add", "Deploys happen only from the release branch", "--category", "convention"]
    warm_similar = contextd(repo, *similar, "--force")
    assert warm_similar.warm and b"Similar records" in warm_similar.stdout
    # A refusal comes back as the daemon's facts, worded here as the command in process words
    # it: the same bytes, and the write is not run a second time.
    for refused in (
        ["decide", "Too thin", "--problem", "short", "--why", "short"],
        list(BILLING),  # a restatement of a stored record
        ["add", "Outside any project this has nowhere to go", "--category", "gotcha"],
    ):
        where = repo if refused[0] != "add" else repo.parent
        for json_flag in ([], ["--json"]):
            after = contextd(where, *refused, *json_flag)
            alone = contextd(where, *refused, *json_flag, env=hook_env(CONTEXTD_DEBUG="1"))
            assert after.warm and not alone.warm, refused
            assert after.code in (2, 3, 4), after.stderr
            assert after.stderr.startswith(b"Error: "), after.stderr
            assert after.printed == alone.printed, refused
