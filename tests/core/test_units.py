"""Small pure pieces: remote normalisation, ids, dates, config, slugs."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from contextd.clock import age, parse_when
from contextd.config import default_config_text, load_settings
from contextd.core.workspace.projects import slugify
from contextd.core.writing.appending import joined
from contextd.errors import ConfigError
from contextd.gitinfo import normalise_remote
from contextd.ids import new_id
from tests.conftest import Cli


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:Acme/Orbit.git",
        "https://github.com/acme/orbit",
        "https://user:tok@github.com/acme/orbit.git/",
        "ssh://git@github.com:22/acme/orbit.git",
        "git+ssh://git@github.com/acme/orbit",
    ],
)
def test_ssh_and_https_forms_of_one_repository_normalise_equal(url: str) -> None:
    assert normalise_remote(url) == "github.com/acme/orbit"


def test_a_local_path_remote_is_kept_as_a_path() -> None:
    assert normalise_remote("/srv/git/orbit.git") == "/srv/git/orbit"


def test_ids_are_uuid7_and_strictly_increasing_within_a_process() -> None:
    ids = [new_id() for _ in range(2000)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(i[14] == "7" and i[19] in "89ab" for i in ids)


def test_parse_when_reads_dates_instants_and_spans() -> None:
    ref = datetime(2026, 11, 29, 12, tzinfo=UTC)
    assert parse_when("30d", reference=ref) == ref - timedelta(days=30)
    assert parse_when("2w", reference=ref) == ref - timedelta(weeks=2)
    assert parse_when("2026-11-01") == datetime(2026, 11, 1, tzinfo=UTC)
    assert parse_when("yesterday-ish") is None


def test_age_speaks_like_a_person() -> None:
    ref = datetime(2026, 11, 29, 12, tzinfo=UTC)
    assert age("2026-11-29T10:00:00.000Z", reference=ref) == "2 hours ago"
    assert age("2026-11-28T12:00:00.000Z", reference=ref) == "1 day ago"
    assert age("2026-11-29T11:59:30.000Z", reference=ref) == "just now"


def test_slugify_makes_ascii_hyphenated_names() -> None:
    assert slugify("Orbit Scheduler") == "orbit-scheduler"
    assert slugify("Café_API") == "cafe-api"
    assert slugify("***") == "project"


def test_config_file_overrides_defaults(home: Path) -> None:
    (home / "config.toml").write_text(
        "[search]\nfts_weight = 2\n[lifecycle]\nstale_days = 30\n", encoding="utf-8"
    )
    settings = load_settings()
    assert settings.search.fts_weight == 2.0
    assert settings.lifecycle.stale_days == 30
    assert settings.context.max_context_tokens == 6000


def test_a_setting_an_earlier_version_had_is_read_as_if_absent(home: Path) -> None:
    (home / "config.toml").write_text(
        '[search]\nfusion = "rrf"\nrrf_k = 3\nfts_weight = 2\n', encoding="utf-8"
    )
    assert load_settings().search.fts_weight == 2.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[search\n", "not valid TOML"),
        ("[search]\nfts_weight = 'high'\n", "must be a float"),
        ("search = 3\n", "must be a table"),
        (
            "[serach]\nrrf_k = 3\n",
            r"\[serach\] .* not a section contextd knows. Did you mean 'search'",
        ),
        (
            '[embeddings]\napi_key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"\n',
            "embeddings.api_key .* not a setting contextd knows. Did you mean 'api_key_env'",
        ),
    ],
)
def test_a_broken_config_is_one_clear_error(home: Path, text: str, expected: str) -> None:
    (home / "config.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=expected):
        load_settings()


def test_a_credential_in_config_is_refused_by_every_command_and_never_quoted(
    home: Path, run: Cli
) -> None:
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    (home / "config.toml").write_text(
        f'[chat]\napi_base = "https://llm.example/v1?key={key}"\n', encoding="utf-8"
    )
    for args in (["status"], ["memories"], ["config"]):
        out = run(*args)
        assert out.exit_code != 0 and key not in out.output
        assert "holds what looks like a credential (OpenAI API key) in chat.api_base" in out.stderr


def test_the_default_config_text_parses_to_the_defaults(home: Path) -> None:
    (home / "config.toml").write_text(default_config_text(), encoding="utf-8")
    assert load_settings().search == load_settings(home=home / "nowhere").search


@pytest.mark.parametrize(
    ("current", "addition", "expected"),
    [
        ("Timing tests are noisy", "Run benchmarks", "Timing tests are noisy. Run benchmarks"),
        ("Timing tests are noisy.", "Run benchmarks", "Timing tests are noisy. Run benchmarks"),
        ("Is it noisy?", "  Yes. ", "Is it noisy? Yes."),
        ('He said "stop."', "We stopped", 'He said "stop." We stopped'),
        ("Steps:\n- build", "- test", "Steps:\n- build\n- test"),
        ("1. build", "test it", "1. build\ntest it"),
        ("Notes", "* one", "Notes\n* one"),
        ("", "First", "First"),
    ],
)
def test_appended_text_joins_as_a_sentence_or_a_line(
    current: str, addition: str, expected: str
) -> None:
    assert joined(current, addition) == expected
