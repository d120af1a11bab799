"""Changing embeddings.precision: vectors of the other precision are stale, as after a model
change, until refresh re-embeds them."""

from pathlib import Path

import pytest

from tests.conftest import DECISION, Cli


@pytest.mark.usefixtures("repo")
def test_int8_marks_fp32_vectors_for_re_embedding_and_refresh_replaces_them(
    run: Cli, home: Path
) -> None:
    assert run("config", "set", "embeddings.provider", "local").exit_code == 0
    decision = run.json(*DECISION)
    before = run.json("config", "--check")["check"]
    assert before["provider"] == "local:all-MiniLM-L6-v2"
    assert before["index"]["embedded"] == 1 and before["fix"] is None

    assert run("config", "set", "embeddings.precision", "int8").exit_code == 0
    stale = run.json("config", "--check")["check"]
    assert stale["provider"] == "local:all-MiniLM-L6-v2:int8"
    assert stale["index"]["embedded"] == 0
    assert stale["index"]["other_models"] == {"local:all-MiniLM-L6-v2/384": 1}
    assert stale["fix"] == "contextd refresh --force-embeddings"

    refreshed = run.json("refresh", "--force-embeddings")
    assert refreshed["embedded"] == 1
    assert refreshed["index"]["other_models"] == {}
    assert run.json("search", "task queue")["results"][0]["id"] == decision["id"]
    # The quantized graph was built once and kept, private, in the home.
    assert (home / "models" / "all-MiniLM-L6-v2.int8.onnx").stat().st_mode & 0o777 == 0o600
