"""`config`, `config set`, `config --toml` and `refresh`."""

import tomllib
from pathlib import Path

import pytest

from tests.conftest import DECISION, Cli

CONSTRAINT = [
    "constrain",
    "Never edit an applied migration",
    "--reason",
    "Applied migrations are checksummed and edits break deploys",
    "--hardness",
    "strong",
]


def _set(run: Cli, key: str, value: str) -> None:
    result = run("config", "set", key, value)
    assert result.exit_code == 0, result.output


def test_config_json_shows_the_paths_and_every_settings_section(run: Cli, home: Path) -> None:
    shown = run.json("config")
    assert shown["home"] == str(home)
    assert shown["config"] == str(home / "config.toml")
    assert shown["database"] == str(home / "contextd.db")
    settings = shown["settings"]
    assert set(settings) == {
        "embeddings",
        "search",
        "context",
        "lifecycle",
        "refresh",
        "chat",
        "capture",
        "daemon",
        "store",
        "share",
        "hooks",
        "sync",
        "vectors",
        "serve",
    }
    assert settings["embeddings"]["provider"] == "hashing"  # from the test config.toml
    assert settings["embeddings"]["dimensions"] == 384
    assert settings["search"]["ranking"] == "hybrid"
    assert settings["context"]["max_context_tokens"] == 6000
    assert settings["lifecycle"]["stale_days"] == 90
    assert "check" not in shown


def test_config_text_is_toml_that_reads_back_as_the_settings(run: Cli, home: Path) -> None:
    result = run("config")
    assert result.exit_code == 0, result.output
    assert f"# home      {home}" in result.stdout
    for section in ("[embeddings]", "[search]", "[context]", "[lifecycle]"):
        assert section in result.stdout
    assert 'provider = "hashing"' in result.stdout
    assert "autostart_daemon = false" in result.stdout
    assert tomllib.loads(result.stdout) == run.json("config")["settings"]


def test_config_check_prints_only_its_check(run: Cli) -> None:
    result = run("config", "--check")
    assert result.exit_code == 0, result.output
    assert "[search]" not in result.stdout and "# home" not in result.stdout
    assert result.stdout.startswith("✓ hashing:v1:384 answered a 384-dimension vector")
    assert list(run.json("config", "--check")) == ["check"]


def test_config_set_changes_the_value_and_keeps_the_comments(run: Cli, home: Path) -> None:
    path = home / "config.toml"
    path.write_text(
        "# my contextd settings\n"
        "[embeddings]\n"
        'provider = "hashing"  # fast for tests\n'
        "\n"
        "[search]\n"
        "# weights tuned on the eval set\n"
        "fts_weight = 0.5\n",
        encoding="utf-8",
    )
    result = run.json("config", "set", "search.fts_weight", "0.8")
    assert result == {"key": "search.fts_weight", "value": 0.8}
    settings = run.json("config")["settings"]
    assert settings["search"]["fts_weight"] == 0.8
    assert settings["embeddings"]["provider"] == "hashing"
    text = path.read_text(encoding="utf-8")
    assert "# my contextd settings" in text
    assert "# fast for tests" in text
    assert "# weights tuned on the eval set" in text
    assert "fts_weight = 0.8" in text and "0.5" not in text


def test_config_set_adds_a_missing_section(run: Cli, home: Path) -> None:
    _set(run, "lifecycle.stale_days", "30")
    assert run.json("config")["settings"]["lifecycle"]["stale_days"] == 30
    text = (home / "config.toml").read_text(encoding="utf-8")
    assert "[lifecycle]" in text and "stale_days = 30" in text
    assert 'provider = "hashing"' in text


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        (
            "search.fts_weigth",
            "1",
            ["Unknown setting 'search.fts_weigth'. Did you mean", "'search.fts_weight'"],
        ),
        ("nosection.fts_weight", "1", ["Unknown setting", "Did you mean 'search.fts_weight'"]),
        ("zzz.qqq", "1", ["Unknown setting 'zzz.qqq'. `contextd config` lists every setting."]),
        ("search.fts_weight", "abc", ["search.fts_weight takes a number; 'abc' is not one."]),
        ("embeddings.provider", "banana", ["local, hashing, openai, none", "'banana'"]),
        ("lifecycle.stale_days", "1.5", ["lifecycle.stale_days takes a whole number", "'1.5'"]),
        ("hooks.autostart_daemon", "yes", ["hooks.autostart_daemon takes true or false"]),
        ("search.ranking", "average", ["hybrid, fts, semantic", "'average'"]),
        ("search.fusion", "rrf", ["Unknown setting 'search.fusion'"]),
        ("embeddings.precision", "fp16", ["embeddings.precision must be one of fp32, int8"]),
        ("store.pool_size", "0", ["store.pool_size must be greater than 0"]),
    ],
)
def test_a_bad_key_or_value_is_a_one_line_error_and_the_file_is_untouched(
    run: Cli, home: Path, key: str, value: str, expected: list[str]
) -> None:
    path = home / "config.toml"
    before = path.read_text(encoding="utf-8")
    result = run("config", "set", key, value)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
    assert len(result.stderr) < 200
    for part in expected:
        assert part in result.stderr
    assert path.read_text(encoding="utf-8") == before


@pytest.mark.usefixtures("repo")
def test_a_zero_vector_width_is_a_config_error_not_a_crash(run: Cli) -> None:
    """Refused either by `config set` or when the provider is built; never exit 70."""
    result = run("config", "set", "embeddings.dimensions", "0")
    refused = 2  # typed in: bad input
    if result.exit_code == 0:
        result, refused = run("config", "--check"), 5
    assert result.exit_code == refused, result.output
    assert "embeddings.dimensions" in result.stderr
    assert "unexpectedly" not in result.stderr


def test_a_bad_value_under_json_is_reported_as_a_json_error(run: Cli) -> None:
    result = run("config", "set", "search.fts_weight", "abc", "--json")
    assert result.exit_code == 2
    assert '"type": "InvalidInputError"' in result.stdout


def test_config_toml_prints_the_file_as_it_is_on_disk(run: Cli, home: Path) -> None:
    text = '# hand-written\n[embeddings]\nprovider = "hashing"\n\n[search]\nfts_weight = 0.7\n'
    (home / "config.toml").write_text(text, encoding="utf-8")
    result = run("config", "--toml")
    assert result.exit_code == 0, result.output
    assert result.stdout == text


def test_config_toml_prints_nothing_when_there_is_no_file(run: Cli, home: Path) -> None:
    (home / "config.toml").unlink()
    result = run("config", "--toml")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""


@pytest.mark.usefixtures("repo")
def test_refresh_with_nothing_pending_embeds_nothing(run: Cli) -> None:
    result = run("refresh")
    assert result.exit_code == 0, result.output
    assert "embeddings  embedded 0 records" in result.stdout
    assert "0/0 records have a current vector." in result.stdout
    run.json(*DECISION)  # embedded when written
    again = run.json("refresh")
    assert again["embedded"] == 0
    assert again["index"]["embedded"] == 1 and again["index"]["records"] == 1


@pytest.mark.usefixtures("repo")
def test_refresh_json_reports_the_index_after_records_are_added(run: Cli) -> None:
    run.json(*DECISION)
    run.json(*CONSTRAINT)
    report = run.json("refresh")
    assert report["embedded"] == 0
    assert report["index"] == {
        "provider": "hashing:v1:384",
        "dimensions": 384,
        "records": 2,
        "embedded": 2,
        "other_models": {},
        "note": None,
        "backend": "sqlite (exact numpy scan)",
    }
    forced = run.json("refresh", "--force-embeddings")
    assert forced["embedded"] == 2 and forced["index"]["embedded"] == 2


@pytest.mark.usefixtures("repo")
def test_refresh_embeds_records_written_while_vectors_were_off(run: Cli) -> None:
    _set(run, "embeddings.provider", "none")
    run.json(*DECISION)
    run.json(*CONSTRAINT)
    _set(run, "embeddings.provider", "hashing")
    pending = run.json("config", "--check")["check"]
    assert pending["index"]["embedded"] == 0 and pending["fix"] == "contextd refresh"
    report = run.json("refresh")
    assert report["embedded"] == 2
    assert report["index"]["embedded"] == 2 and report["index"]["records"] == 2
    assert run.json("refresh")["embedded"] == 0


@pytest.mark.usefixtures("repo")
def test_with_vectors_off_refresh_says_so_and_search_falls_back_to_full_text(run: Cli) -> None:
    record = run.json(*DECISION)
    _set(run, "embeddings.provider", "none")

    result = run("refresh")
    assert result.exit_code == 0, result.output
    assert "embeddings  vectors are off: nothing to embed" in result.stdout
    assert "index       vectors are off: no index to rebuild" in result.stdout

    check = run("config", "--check")
    assert check.exit_code == 5
    assert "full-text only" in check.stderr

    found = run.json("search", "task queue")
    assert [hit["id"] for hit in found["results"]] == [record["id"]]
    assert isinstance(found["degraded"], str) and "vectors are off" in found["degraded"]


def test_the_summarizer_and_its_chat_endpoint_are_settings_checked_like_the_others(
    run: Cli,
) -> None:
    shown = run.json("config")["settings"]
    assert shown["refresh"]["summarizer"] == "none" and shown["chat"]["model"] == ""
    _set(run, "refresh.summarizer", "openai")
    _set(run, "chat.api_key_env", "CHAT_KEY")
    assert run("config", "set", "refresh.summarizer", "gpt").exit_code != 0
    assert run("config", "set", "chat.api_key_env", "sk-1234 secret").exit_code != 0
    assert run("config", "set", "chat.timeout_s", "0").exit_code != 0
    shown = run.json("config")["settings"]
    assert shown["refresh"]["summarizer"] == "openai"
    assert shown["chat"]["api_key_env"] == "CHAT_KEY"
