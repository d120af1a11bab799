"""Shared fixtures: every test gets its own CONTEXTD_HOME and a clean environment."""

import json
import os
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from contextd.app import App, open_app
from contextd.cli.main import cli
from contextd.config import load_settings
from tests.pg_cluster import PASSWORD, Cluster, ClusterUnavailable, start_cluster


def pytest_report_header() -> str:
    conn = sqlite3.connect(":memory:")
    fts5 = (
        "yes"
        if conn.execute("SELECT sqlite_compileoption_used('ENABLE_FTS5')").fetchone()[0]
        else "no"
    )
    loadable = hasattr(conn, "enable_load_extension")
    conn.close()
    return f"SQLite {sqlite3.sqlite_version}, FTS5 {fts5}, extension loading {loadable}"


_NO_SERVER = "PostgreSQL with pgvector could not start here"
_ON_SERVER = "contextd_server"  # a user property of every test that got a server database


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """A real PostgreSQL with pgvector on a loopback port, for the whole run."""
    try:
        cluster = start_cluster()
    except ClusterUnavailable as exc:
        pytest.skip(f"{_NO_SERVER}: {exc}")
    yield cluster
    cluster.stop()


@pytest.fixture
def pg_url(
    pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[str]:
    """A fresh database on the test server; its password is in PGPASSWORD, not in the URL."""
    request.node.user_properties.append((_ON_SERVER, True))
    url = pg_cluster.database()
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    yield url
    pg_cluster.drop(url)


# Tests that need a server or a program from outside Python: PostgreSQL, sshd, Chromium, the
# agents' own CLIs. `bash scripts/check --fast` leaves them out (`-m "not outside"`).
_OUTSIDE = (
    "tests/postgres/",
    "tests/integration/",
    "tests/web/test_browser.py",
    "tests/sync/test_remote_ssh.py",
    "tests/sync/test_remote_trust.py",
    "tests/sync/test_remote_limits.py",
    "tests/daemon/test_scheduled_pull.py",
)
SLOW_S = 10.0  # a test over this is listed at the end of the run; mark it `slow` if it must be


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = Path(str(config.rootpath))
    for item in items:
        where = Path(str(item.fspath)).relative_to(root).as_posix()
        if where.startswith(_OUTSIDE) or "pg_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.outside)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Every test over SLOW_S seconds is listed, marked `slow` or not, so the suite cannot grow
    slow quietly. With CI set, the run's last lines also say how many tests ran on the
    PostgreSQL server and how many were skipped because it could not start: a green run that
    tested no server code shows it."""
    _list_slow(terminalreporter)
    if not os.environ.get("CI"):
        return
    outcomes: dict[str, int] = {"passed": 0, "failed": 0}
    skipped = 0
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) == "call" and (_ON_SERVER, True) in getattr(
                report, "user_properties", ()
            ):
                outcome = "passed" if report.passed else "failed"
                outcomes[outcome] += 1
            elif getattr(report, "skipped", False) and _NO_SERVER in str(report.longrepr):
                skipped += 1
    ran = sum(outcomes.values())
    terminalreporter.write_line(
        f"PostgreSQL server tests: {ran} ran ({outcomes['passed']} passed, "
        f"{outcomes['failed']} failed), {skipped} skipped because the server could not start"
    )


def _list_slow(terminalreporter: Any) -> None:
    took: dict[str, float] = {}
    marked: set[str] = set()
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) in ("setup", "call", "teardown"):
                took[report.nodeid] = took.get(report.nodeid, 0.0) + report.duration
                if "slow" in getattr(report, "keywords", {}):
                    marked.add(report.nodeid)
    slow = sorted(((s, n) for n, s in took.items() if s > SLOW_S), reverse=True)
    if not slow:
        return
    terminalreporter.section(f"tests over {SLOW_S:.0f} s")
    for seconds, nodeid in slow:
        note = "" if nodeid in marked else "  (not marked slow: make it faster, or mark it)"
        terminalreporter.write_line(f"{seconds:6.1f} s  {nodeid}{note}")


def use_server(folder: Path, url: str) -> None:
    """Point the home at the team server: `[store] url` in its config.toml."""
    config = folder / "config.toml"
    text = config.read_text(encoding="utf-8") if config.exists() else ""
    config.write_text(text + f'[store]\nurl = "{url}"\n', encoding="utf-8")


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Path:
    """A private store folder; nothing a test does reaches the real ~/.contextd.

    With CONTEXTD_TEST_STORE=postgresql every test's store is on the test server instead
    (a way to run the whole suite against PostgreSQL; tests that open the SQLite file
    themselves then fail by design)."""
    folder = tmp_path / "home"
    folder.mkdir(mode=0o700)
    # Fast, deterministic vectors by default; tests of the real model opt in with `local_model`.
    (folder / "config.toml").write_text(
        '[embeddings]\nprovider = "hashing"\n[hooks]\nautostart_daemon = false\n', encoding="utf-8"
    )
    if os.environ.get("CONTEXTD_TEST_STORE") == "postgresql":
        use_server(folder, request.getfixturevalue("pg_url"))
    monkeypatch.setenv("CONTEXTD_HOME", str(folder))
    monkeypatch.delenv("CONTEXTD_PROJECT", raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)  # the daemon's socket: in the home
    for width in ("COLUMNS", "LINES"):  # tables at the width of no terminal, however run
        monkeypatch.delenv(width, raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return folder


@pytest.fixture
def local_model(home: Path) -> None:
    """The real sentence model (the package installed for development) instead of hashing."""
    config = home / "config.toml"
    text = config.read_text(encoding="utf-8").replace('provider = "hashing"', 'provider = "local"')
    config.write_text(text, encoding="utf-8")


def maps_library(pid: int, name: str, *, within: float = 60.0) -> bool:
    """Whether process `pid` maps a shared library named `name` (a runtime it has loaded)
    within `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if name in Path(f"/proc/{pid}/maps").read_text(encoding="utf-8", errors="replace"):
            return True
        time.sleep(0.2)
    return False


def make_repo(path: Path, remote: str | None = None) -> Path:
    """A real git work tree, optionally with an `origin` remote."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    if remote:
        subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], check=True)
    return path


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git project folder, attached, and the current directory."""
    path = make_repo(tmp_path / "orbit", "git@github.com:acme/orbit.git")
    monkeypatch.chdir(path)
    result = CliRunner().invoke(cli, ["attach"])
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture
def app(home: Path, repo: Path) -> Iterator[App]:
    """The core API over the test store, with the `repo` project current."""
    with open_app(load_settings(cwd=repo)) as opened:
        yield opened


class Cli:
    """Runs `contextd` in-process the way a terminal would."""

    def __init__(self) -> None:
        self.runner = CliRunner()

    def __call__(self, *args: str, input: str | None = None) -> Result:
        return self.runner.invoke(cli, list(args), input=input)

    def json(self, *args: str) -> Any:
        result = self(*args, "--json")
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)


@pytest.fixture
def run() -> Cli:
    return Cli()


DECISION = [
    "decide",
    "Use NATS for the task queue",
    "--problem",
    "Redis pub/sub dropped tasks whenever workers reconnected during a deploy",
    "--why",
    "NATS JetStream keeps durable consumers with acks and replay, so a worker that "
    "reconnects resumes where it stopped",
]

POSTGRES = [
    "decide",
    "Use PostgreSQL SKIP LOCKED for the task queue",
    "--problem",
    "We want a durable task queue without running one more service in production",
    "--why",
    "Postgres is already deployed and SKIP LOCKED gives safe concurrent dequeue "
    "inside transactions we already trust",
]
