"""Credentials are refused on every write path and never reach the store; prose is not."""

from pathlib import Path

import pytest

from contextd.core.secrets import find_secrets
from tests.conftest import DECISION, Cli

# Built from pieces so this file does not itself look like it holds live credentials.
GITHUB = "ghp_" + "a1B2c3D4e5" * 4
SECRETS = {
    "GitHub token": f"deploy with {GITHUB}",
    "GitHub token ": "fine-grained github_pat_" + "11ABCDEFG0" * 7,
    "GitLab token": "glpat-" + "xY12zW34vU56tS78rQ90",
    "Slack token": "bot uses xoxb-" + "1234567890-abcdefghijKLMN",
    "Slack webhook URL": "alerts go to https://hooks.slack.com/services/T0AB12CD/B0CD34EF/"
    + "aBcDeFgHiJkLmNoP",
    "AWS access key id": "key AKIA" + "IOSFODNN7EXAMPQR",
    "Google API key": "maps key AIza" + "SyD1234567890abcdefghijklmnopqrstuv",
    "OpenAI API key": "OPENAI_API_KEY=sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vX7z" * 2,
    "Anthropic API key": "sk-ant-api03-" + "x7Y9z1A3b5C7d9E1f3G5h7" * 3,
    "Azure storage account key": "AccountKey=" + "Ab3dE5gH7jK9mN1pQ3sT5vX7z+/" * 4,
    "JSON web token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "private key block": "-----BEGIN OPENSSH PRIVATE KEY-----",
    "password in a URL": "prod is postgres://app:Zq8#kL2mV9@db.internal/app",
    "secret assigned to a name": 'db_password = "Xk3!9dQz$Lm2vPq8"',
    "high-entropy string": "use Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1u here",
}

PROSE = [
    "Rotate the API key monthly and keep it in the vault",
    "The session token expires after 30 minutes of inactivity",
    "Passwords must be at least 14 characters long",
    "Fixed in a1b2c3d4e5f60718293a4b5c6d7e8f9012345678 (the retry commit)",
    "Record 01a2279b-452c-76f2-86eb-ee63f7a8f563 replaced the old queue note",
    "See https://github.com/acme/orbit and postgres://localhost/app for setup",
    "API_KEY=${OPENAI_API_KEY} is read at start-up",
    "token: <your-token-here>",
    "JWT_SECRET=your-secret-key-here in the sample .env",
    "DATABASE_URL=postgresql://user:password@localhost:5432/app in the README sample",
    "secret_key_base comes from the SECRET_KEY_BASE environment variable",
    "src/contextd/storage/migrations/0001_initial_schema_definitions.sql",
]


@pytest.mark.parametrize(("kind", "text"), SECRETS.items())
def test_each_credential_format_is_found_by_kind(kind: str, text: str) -> None:
    assert [f.kind for f in find_secrets(text)] == [kind.strip()]


@pytest.mark.parametrize("text", PROSE)
def test_ordinary_prose_about_keys_is_not_a_secret(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.usefixtures("repo")
@pytest.mark.parametrize(
    "args",
    [
        ["add", f"Deploys authenticate with {GITHUB}", "--category", "gotcha"],
        [*DECISION, "--tried", f"a personal token {GITHUB} in CI"],
        ["add", "Deploys need a token from the vault", "--category", "gotcha", "--hint", GITHUB],
        [
            "pipeline",
            "Release",
            "--purpose",
            "Ship a tagged build safely",
            "--step",
            f"export GH_TOKEN={GITHUB}",
        ],
    ],
)
def test_a_record_holding_a_secret_is_refused_without_echoing_it(
    run: Cli, home: Path, args: list[str]
) -> None:
    result = run(*args)
    assert result.exit_code == 2
    assert "GitHub token" in result.stderr and "never stores secrets" in result.stderr
    assert GITHUB not in result.output and "a1B2c3D4e5" not in result.output
    assert run.json("memories")["records"] == []
    for path in home.rglob("*"):
        if path.is_file():
            assert b"a1B2c3D4e5" not in path.read_bytes(), path


@pytest.mark.usefixtures("repo")
def test_an_update_cannot_smuggle_a_secret_in(run: Cli, home: Path) -> None:
    record = run.json(*DECISION)
    result = run("update", record["id"], "--tradeoffs", f"needs {GITHUB} on every runner")
    assert result.exit_code == 2
    assert "tradeoffs" in result.stderr and GITHUB not in result.output
    assert run.json("show", record["id"])["body"]["tradeoffs"] == ""
    for path in home.rglob("*"):
        if path.is_file():
            assert b"a1B2c3D4e5" not in path.read_bytes(), path
