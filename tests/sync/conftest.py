"""Several "machines" as several contextd homes, and a real sshd reaching them."""

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from contextd.cli.main import cli
from tests.sync.sshd import SSHD, SshServer, start_sshd

CONTEXTD = str(Path(sys.executable).parent / "contextd")

NOTES = [
    "GPU scheduler uses NATS JetStream for task transport between coordinator and workers",
    "Applied database migrations are checksummed in production and must never be edited",
    "The billing service retries webhooks with exponential backoff capped at ten minutes",
    "Frontend bundles are built with esbuild because webpack took four minutes per build",
]


class Machine:
    """One contextd store, driven through the CLI as a person on that machine would."""

    def __init__(self, home: Path) -> None:
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text('[embeddings]\nprovider = "hashing"\n', encoding="utf-8")

    def __call__(self, *args: str, input: str | bytes | None = None) -> Result:
        return CliRunner().invoke(cli, ["--home", str(self.home), *args], input=input)

    def json(self, *args: str, input: str | bytes | None = None) -> Any:
        result = self(*args, "--json", input=input)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    def attach(self, folder: Path, remote: str = "git@github.com:acme/orbit.git") -> str:
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", str(folder)], check=True)
        subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", remote], check=True)
        return str(self.json("attach", str(folder))["project"]["slug"])

    def note(self, text: str, project: str = "orbit") -> str:
        return str(self.json("add", text, "--category", "architecture", "--project", project)["id"])

    def records(self, project: str = "orbit") -> dict[str, dict[str, Any]]:
        listed = self.json("memories", "--all", "--project", project)["records"]
        return {r["id"]: r for r in listed}


@pytest.fixture
def laptop(home: Path) -> Machine:
    """This machine: the test's own CONTEXTD_HOME."""
    return Machine(home)


@pytest.fixture
def lab(tmp_path: Path) -> Machine:
    """The other machine (reached over ssh with --remote-home)."""
    return Machine(tmp_path / "lab-home")


@pytest.fixture(scope="session")
def sshd_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    if SSHD is None:
        pytest.skip("sshd is not installed (scripts/check installs openssh-server)")
    server = start_sshd(tmp_path_factory.mktemp("sshd"))
    yield server
    server.process.terminate()
    server.process.wait(timeout=10)


@pytest.fixture
def sshd(sshd_server: SshServer) -> Iterator[SshServer]:
    """The server, with the account's login profile reset after each test."""
    yield sshd_server
    (sshd_server.user_home / ".profile").unlink(missing_ok=True)


def add_remote(machine: Machine, name: str, other: Machine, sshd: SshServer, *extra: str) -> None:
    """Name `other` as a remote of `machine`, reached through the test sshd."""
    result = machine(
        "remote",
        "add",
        name,
        "lab",
        "--command",
        CONTEXTD,
        "--remote-home",
        str(other.home),
        *sshd.options,
        *extra,
    )
    assert result.exit_code == 0, result.output
