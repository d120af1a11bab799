"""`attach` imports the notes of existing agent files as `import` records, once."""

import json
from pathlib import Path

import pytest

from contextd.agents.importer import notes_of
from tests.capped_run import run_capped
from tests.conftest import Cli, make_repo

CLAUDE_MD = """# Orbit

Orbit schedules GPU jobs across the lab's machines.

## Conventions
- Use pnpm, not npm, for every package script
- Keep migrations reversible
  - a down migration is reviewed like the up one

Run the checks with:
1. make lint
2. make test

## Gotchas
* The cache is never invalidated on deploy; bump CACHE_VERSION by hand

<!-- contextd:begin -->
- [constraint 0123] Exported text that must not come back as a record
<!-- contextd:end -->
"""

CURSOR_RULE = """---
description: Frontend rules
globs: web/**
alwaysApply: false
---

## Architecture
- The web client talks to the coordinator only through the REST gateway
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = make_repo(tmp_path / "orbit", "git@github.com:acme/orbit.git")
    (path / "CLAUDE.md").write_text(CLAUDE_MD, encoding="utf-8")
    (path / "AGENTS.md").write_text(CLAUDE_MD, encoding="utf-8")  # often a copy
    (path / ".cursor" / "rules").mkdir(parents=True)
    (path / ".cursor" / "rules" / "web.mdc").write_text(CURSOR_RULE, encoding="utf-8")
    (path / ".windsurfrules").write_text("- Never push straight to main\n", encoding="utf-8")
    monkeypatch.chdir(path)
    return path


def test_attach_imports_agent_file_notes_as_import_records(project: Path, run: Cli) -> None:
    out = run.json("attach")
    imported = out["imported"]
    assert imported["files"] == [
        "CLAUDE.md",
        "AGENTS.md",
        ".windsurfrules",
        ".cursor/rules/web.mdc",
    ]
    stored = run.json("memories")["records"]
    titles = {r["title"]: r for r in stored}
    assert imported["records"] == len(stored) == 8
    assert imported["duplicates"] == 6  # AGENTS.md repeats CLAUDE.md
    assert all(r["origin"] == "import" for r in stored)
    assert titles["Use pnpm, not npm, for every package script"]["category"] == "convention"
    gotcha = "The cache is never invalidated on deploy; bump CACHE_VERSION by hand"
    assert titles[gotcha]["category"] == "gotcha"
    web = "The web client talks to the coordinator only through the REST gateway"
    assert titles[web]["category"] == "architecture"
    assert "Run the checks with: make lint" in titles
    assert "Never push straight to main" in titles
    assert not any("Exported text" in t or "alwaysApply" in t for t in titles)


def test_a_second_attach_imports_nothing_new(project: Path, run: Cli) -> None:
    first = run.json("attach")["imported"]["records"]
    second = run.json("attach")["imported"]
    assert first > 0
    assert second["records"] == 0 and second["duplicates"] == first + 6
    assert len(run.json("memories")["records"]) == first


def test_no_import_skips_the_agent_files(project: Path, run: Cli) -> None:
    out = run.json("attach", "--no-import")
    assert out["imported"] is None
    assert run.json("memories")["records"] == []


def test_a_secret_in_an_agent_file_is_refused_not_stored(project: Path, run: Cli) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    (project / "GEMINI.md").write_text(f"- Deploy with the token {token}\n", encoding="utf-8")
    out = run.json("attach")["imported"]
    assert out["refused"] == 1
    assert not any(token in r["title"] for r in run.json("memories")["records"])


def test_an_undecodable_agent_file_is_skipped_and_attach_still_works(
    project: Path, run: Cli
) -> None:
    (project / "GEMINI.md").write_bytes(b"\xff\xfe- not utf-8 \xff\n")
    out = run.json("attach")
    assert "GEMINI.md" not in out["imported"]["files"]
    assert out["imported"]["records"] == 8


def test_notes_split_by_items_and_paragraphs_with_code_kept_beside_its_text() -> None:
    notes = notes_of(
        "## Testing\n\nBuild it with:\n\n```sh\nmake all\n# not a heading\n```\n\n"
        "- Tabs\n\nA paragraph that stands on its own.\n"
    )
    assert [n.text for n in notes] == [
        "Build it with:\n```sh\nmake all\n# not a heading\n```",
        "Testing: Tabs",
        "A paragraph that stands on its own.",
    ]
    assert {n.heading for n in notes} == {"Testing"}


def test_export_leaves_out_the_notes_imported_from_that_same_file(project: Path, run: Cli) -> None:
    run.json("attach")
    run.json("export", "claude")
    claude = (project / "CLAUDE.md").read_text(encoding="utf-8")
    block = claude[claude.index("<!-- contextd:begin -->") :]
    assert "Use pnpm" not in block  # it stands above the block already
    assert claude.count("Use pnpm, not npm") == 1
    assert "Never push straight to main" in block  # imported from .windsurfrules
    assert "left out" not in block
    run.json("export", "gemini")
    assert "Use pnpm, not npm" in (project / "GEMINI.md").read_text(encoding="utf-8")
    assert run.json("export", "claude", "--check")["state"] == "current"


def test_a_huge_agent_file_is_skipped_unread_and_attach_still_works(project: Path) -> None:
    with (project / "GEMINI.md").open("wb") as handle:
        handle.truncate(64 * 1024**3)  # sparse: as a symlink to a huge file would be
    done = run_capped(["attach", "--json"], cwd=project)
    assert done.code == 0, done.stderr
    imported = json.loads(done.stdout)["imported"]
    assert "GEMINI.md" not in imported["files"] and imported["records"] == 8
    assert "GEMINI.md is larger than 16 MB, the most a file of notes contextd reads" in done.stderr
    assert done.peak_mb < 200
