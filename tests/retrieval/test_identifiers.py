"""Identifiers in queries and records: a developer's query names code (`set_eager_imports()`,
`setEagerImports`, `REL1_36`); full text finds the record however it spells the name — split
into words in prose, snake_case, camelCase — and ranks the one holding it exactly first."""

from pathlib import Path

import pytest

from tests.conftest import Cli

SCATTERED = "The loader imports modules eagerly; set the eager flag on imports in conftest"
LITERAL = "Tests call set_eager_imports(False) before any plugin module loads"
CAMEL = "The bootstrap calls setEagerImports(false) before the plugin registry is built"
RELEASE = "The REL1_36 branch keeps the legacy parser until every wiki has migrated"


def _ids(run: Cli, query: str) -> list[str]:
    return [hit["id"] for hit in run.json("search", query)["results"]]


@pytest.fixture
def stored(run: Cli, repo: Path) -> dict[str, str]:
    texts = {"scattered": SCATTERED, "literal": LITERAL, "camel": CAMEL, "release": RELEASE}
    return {
        name: run.json("add", text, "--category", "convention", "--force")["id"]
        for name, text in texts.items()
    }


def test_a_snake_case_name_finds_its_words_in_prose_and_itself_first(
    run: Cli, stored: dict[str, str]
) -> None:
    found = _ids(run, "set_eager_imports()")
    assert found[0] == stored["literal"]  # the name itself first
    assert stored["scattered"] in found  # its words, not side by side


def test_a_camel_case_name_is_found_by_its_words_and_by_itself(
    run: Cli, stored: dict[str, str]
) -> None:
    assert stored["camel"] in _ids(run, "eager imports bootstrap")
    assert _ids(run, "setEagerImports")[0] == stored["camel"]
    assert stored["literal"] in _ids(run, "setEagerImports")  # the same name, snake_case


def test_a_version_name_keeps_its_letters_and_digits_together(
    run: Cli, stored: dict[str, str]
) -> None:
    assert _ids(run, "REL1_36")[0] == stored["release"]
