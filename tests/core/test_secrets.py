"""Credentials are refused on every write path and never reach the store; prose is not."""

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contextd.credentials.scan import find_secrets
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
    "password in a URL ": "cache is redis://:pw@cache.internal:6379",
    "password assigned to a name": "db_password = hunter22",
    "password assigned to a name ": "dbPassword: hunter22",
    "password in a sentence": "the password is Summer2024!",
    "password in a sentence ": "the password for prod was Summer2024! until Monday",
    "Bearer token": "curl -H 'Authorization: Bearer 8f3kq0Zr7LmNw2Xy5Tb1Qa' the API",
    "GitHub token  ": "split by a zero-width space: " + GITHUB[:12] + "\u200b" + GITHUB[12:],
    "GitHub token   ": "split by a space: " + GITHUB[:14] + " " + GITHUB[14:],
    "AWS access key id ": "split twice: AKIA IOSF" + "\u00adODNN7EXAMPQR",
    "Discord webhook URL": "alerts go to https://discord.com/api/webhooks/112233445566778899/"
    + "Ab3dE5gH7jK9mN1pQ3sT5vX7z" * 3,
    "Telegram bot token": "notify via https://api.telegram.org/bot1234567890:AA"
    + "Hd9sK2mQ7xZ4vB8nL1wR6tY3pF5gJ0cE"
    + "/sendMessage",
    "NATS nkey seed": "the account seed is SA" + ("CQ7LMKZUB5XWYF3HPA2JV6ENRSTDGO4I" * 2)[:56],
    "contextd token": "the CI bot's is ctd_k3v9q2m0x7aa_" + ("Vt2hQ9zL0pXw4Rk7mN1cB8sD" * 2)[:43],
    # Beside a lookalike of technical prose, a credential is still one.
    "GitHub token    ": f"sha256={GITHUB}",
    "secret assigned to a name ": "API tokens: Xk3dQz9LmP2vRq8WbT5y",
    "secret assigned to a name  ": "curl https://api.example.com/v1/items?access_token="
    + "Xk3dQz9LmP2vRq8WbT5yN7cH",
    "secret assigned to a name   ": "WEBHOOK_SECRET_URL=https://example.com/hooks/"
    + "Xk3dQz9LmP2vRq8WbT5yN7cH",
    "high-entropy string ": "export it from https://files.example.com/export?sig="
    + "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1u",
    "high-entropy string  ": "mail ci@example.org, then run with "
    + "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1u",
    "password in a URL  ": "git clone https://ci:Zq8kL2mV9Pw3@github.com/acme/orbit",
    "password assigned to a name  ": "password = correct-horse-battery-staple",
    "password assigned to a name   ": "Password: Summer2024",
    "private key block ": "-----BEGIN CERTIFICATE-----\nMIIBkTCCATegAwIBAgIU\n"
    "-----END CERTIFICATE-----\n-----BEGIN EC PRIVATE KEY-----",
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
    "/tmp/pytest-of-root/pytest-7/test_unknown_remote_and_duplicate0/lab-home",
    "The password is required and must be 14 characters; passwords are rotated monthly",
    "The password is SHA-256 hashed, then sha256-hashed again with a per-user salt",
    "The password is stored in the vault since 2024; see the 1Password entry",
    "password_min_length = 12 and bypass = enabled for the compass = north2 service",
    "Bearer authentication is used everywhere in the gateway",
    "use ghp_ tokens for the CI runner and rotate them monthly please",
    "sk-proj- keys are stored in the vault and never in the repository either",
    "AKIA keys are rotated by the platform team every ninety days",
    "redis://cache.internal:6379/0 and https://user:password@localhost in the sample",
    # Digests shown with their algorithm, integrity hashes, fingerprints.
    "The digest is written as SHA-256=IdgP4UYMGt47rgecOqFoLrd24AXukHf5-SVzqQ5Psg8= (RFC-6234)",
    'integrity="sha384-GINhAiHCBW18qP6BfzwzUtYkDJghIQAl7XcoKLJNHy3TLD7YHfQfkiXc3HtXRSCc"',
    "Content-Digest: sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:",
    '"digest": "Q2Zh1m7Tp8KkA4x9bN3fR6vW0yL5cD2eH8jM1sP4uX7zB0gK3nQ6"',
    "The host key fingerprint is SHA256:jhiUG2S+dTWX0i/nTd31e9Lvw/6TEaL32cPSul955Y0",
    # Mail addresses, and words or code after a secret-sounding name.
    "We will have the following users to hold API tokens: "
    "the-platform-team+registry-ci@build.example.org",
    "API tokens: per-environment, never shared between pipelines",
    "Password: Mandatory for the console login; Password: self-service via the portal",
    "Auth: GitHub-Actions-OIDC; credentials: ~/.aws/credentials; token = settings.DEPLOY_TOKEN",
    "Author: Marc-André Lemburg <mal@example.com>",
    "def refresh(self, token: Iterator[bytes], credentials = get_credentials()) -> None",
    # Links to documents by id, identifiers made of words, public keys.
    "https://docs.google.com/document/d/1pATbc1uTAJpdkO2B8xg6P9i3NSx5_aBT-G-R6LAeegQ/edit",
    "https://rust-lang.zulipchat.com/#narrow/stream/219381-t-libs/topic/T-lang.20preludes",
    "see architecture_decision_records/ADR024-web-app-language-and-framework-selection-2",
    "the BOSHJobEphemeralDiskPredictWillFill alert and PyUnicode_TransformDecimalToASCII",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAWi8IJENavURbWOtU7w2llaKF5432wsg3xUqm9I4ucH ci@docs",
    "the server's public nkey NCUOUH6YICRESE73CKTXESMGA4ZN4KTELXPUIE6JCRTL6IF4UWE3B2Z4",
    # Compilers' mangled symbol names, acronym-led identifiers, an emoji after "pass".
    "`std::mem::align_of::<&str>` is `_RINvNtC3std3mem8align_ofNtNtC3std3mem12DiscriminantE`",
    "the legacy symbol _ZN3std2io5stdio6_print17h4f2b6e0bd3a7c1e2E stays readable",
    "under the symbol `_$sST3sumSz7ElementRpzrlEAASdyFSaySiG_Tg5`, which demangles to sum",
    '@_silgen_name("sSS14validatingUTF8SSSgSPys4Int8VG_tcfC") public init?(validating:)',
    "Error | XMLParser.ErrorCode | NSXMLParserExternalEntityResolvingPolicy | XMLParserDelegate",
    "which will crash :x: or pass :white_check_mark: depending on the platform",
]

# Decision records and specifications (README.md there names each one's source and licence).
CORPUS = sorted(
    path
    for path in (Path(__file__).parent / "prose").iterdir()
    if path.suffix in (".md", ".rst") and path.name != "README.md"
)


@pytest.mark.parametrize(
    "text",
    [
        "key _RaB3xK9QzLmP2vT8wYcD4eF6gH0jK1lM5nO7",  # shaped like a mangled name, random
        "token $sQ3xkqWe9ZaB3xkqwPzLmP2vT8wYcD4eF6gH0",
        "pass: hunter2:",
    ],
)
def test_what_only_starts_like_a_mangled_name_or_an_emoji_is_still_a_secret(text: str) -> None:
    assert find_secrets(text) != []


@pytest.mark.parametrize(("kind", "text"), SECRETS.items())
def test_each_credential_format_is_found_by_kind(kind: str, text: str) -> None:
    assert [f.kind for f in find_secrets(text)] == [kind.strip()]


def test_a_split_token_is_reported_over_the_text_as_given() -> None:
    text = "push with " + GITHUB[:12] + "\u200b" + GITHUB[12:20] + " " + GITHUB[20:] + " today"
    (found,) = find_secrets(text)
    assert text[found.start : found.end].replace("\u200b", "").replace(" ", "") == GITHUB


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


EVAL = Path(os.environ.get("CONTEXTD_EVAL_DATA", "/work/shared/eval"))


@pytest.mark.skipif(not EVAL.is_dir(), reason="the shared eval datasets are not on this machine")
def test_no_text_of_the_eval_datasets_is_taken_for_a_secret() -> None:
    flagged = []
    for path in sorted(EVAL.glob("*/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            for text in _texts(json.loads(line)):
                flagged += [(path.parent.name, f.kind) for f in find_secrets(text)]
    assert flagged == []


@pytest.mark.parametrize("text", PROSE)
def test_ordinary_prose_about_keys_is_not_a_secret(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize("path", CORPUS, ids=lambda path: path.name)
def test_real_technical_prose_holds_no_secret_whole_or_by_paragraph(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert find_secrets(text) == []
    assert [p for p in text.split("\n\n") if find_secrets(p)] == []


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
