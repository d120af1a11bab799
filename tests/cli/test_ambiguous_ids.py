"""A name that fits more than one record is refused on every command that takes an id, read or
write, CLI and MCP alike: each candidate is listed (handle, id, kind, title) and nothing in the
store changes. Twenty records written in one burst share their first eight id characters."""

import sqlite3
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from contextd import ids
from contextd.app import App
from tests.conftest import Cli
from tests.mcp.test_tools import call


def _burst(run: Cli) -> list[dict[str, Any]]:
    written = [
        run.json("add", f"Worker pool {n} drains its queue every {n + 2} seconds", "--category",
                 "convention")
        for n in range(20)
    ]  # fmt: skip
    assert len({w["id"][:8] for w in written}) == 1, "the burst should share 8 characters"
    return written


def _store(home: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(home / "contextd.db") as conn:
        return conn.execute("SELECT * FROM records ORDER BY id").fetchall()


@pytest.fixture
def burst(
    run: Cli, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, list[dict[str, Any]]]:
    # An id's first eight characters change every 65.5 s (its top 32 bits of milliseconds):
    # the ids' clock is set back to the start of such a window, so a slow burst stays in one.
    real = time.time_ns
    behind = (real() // 1_000_000 % (1 << 16) - 100) * 1_000_000
    monkeypatch.setattr(ids, "time", SimpleNamespace(time_ns=lambda: real() - behind))
    written = _burst(run)
    return written[0]["id"][:8], written


CLI_COMMANDS = [
    ("show", "{p}"),
    ("history", "{p}"),
    ("update", "{p}", "--title", "Worker pools drain their queues every few seconds"),
    ("supersede", "{p}", "--by", "M20"),
    ("supersede", "M1", "--by", "{p}"),
    ("archive", "{p}"),
    ("unarchive", "{p}"),
    ("unsupersede", "{p}"),
    ("delete", "{p}"),
    ("restore", "{p}"),
    ("verify", "{p}"),
    ("learn", "how often do worker pools drain", "{p}"),
    ("sync", "resolve", "{p}", "--keep", "local"),
    ("add", "Queues are drained by the pool workers", "--category", "gotcha", "--related", "{p}"),
    ("add", "Queues are drained by the pool workers", "--category", "gotcha", "--supersedes",
     "{p}"),
]  # fmt: skip


@pytest.mark.parametrize("args", CLI_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_every_command_refuses_a_prefix_that_fits_several_and_changes_nothing(
    run: Cli, home: Path, burst: tuple[str, list[dict[str, Any]]], args: tuple[str, ...]
) -> None:
    prefix, written = burst
    before = _store(home)
    out = run(*(a.format(p=prefix) for a in args))
    assert out.exit_code == 2, out.output
    assert f"'{prefix}' fits 20 records, so nothing was done" in out.stderr
    assert f"M1 = {written[0]['id']}, memory 'Worker pool 0 drains" in out.stderr
    assert "and 10 more" in out.stderr  # ten listed, the count of the rest
    assert _store(home) == before


MCP_CALLS = [
    ("get_entry", {"id": "{p}"}),
    ("update_entry", {"id": "{p}", "title": "Worker pools drain their queues every few seconds"}),
    ("append", {"id": "{p}", "text": "Draining pauses during deploys."}),
    ("link", {"id": "{p}", "to": "M20"}),
    ("link", {"id": "M20", "to": "{p}"}),
    ("supersede", {"old_id": "{p}", "new_id": "M20"}),
    ("supersede", {"old_id": "M1", "new_id": "{p}"}),
    ("archive", {"id": "{p}"}),
    ("delete", {"id": "{p}"}),
    ("verify_entry", {"id": "{p}"}),
    ("learn", {"query": "how often do worker pools drain", "id": "{p}"}),
    (
        "remember",
        {"text": "Queues are drained by the pool workers", "category": "gotcha",
         "related_to": ["{p}"]},
    ),
]  # fmt: skip


def test_every_mcp_tool_refuses_a_prefix_that_fits_several_and_changes_nothing(
    app: App, run: Cli, home: Path, burst: tuple[str, list[dict[str, Any]]]
) -> None:
    prefix, written = burst
    before = _store(home)

    def filled(value: Any) -> Any:
        if isinstance(value, str):
            return value.format(p=prefix)
        if isinstance(value, list):
            return [filled(v) for v in value]
        return value

    results = call(
        app, *((name, {k: filled(v) for k, v in args.items()}) for name, args in MCP_CALLS)
    )
    for (name, _), result in zip(MCP_CALLS, results, strict=True):
        text = result.content[0].text
        assert result.is_error, (name, text)
        assert f"'{prefix}' fits 20 records, so nothing was done" in text, (name, text)
        assert f"M1 = {written[0]['id']}, memory" in text
    assert _store(home) == before


def test_handles_name_the_records_of_a_burst_one_each(
    run: Cli, burst: tuple[str, list[dict[str, Any]]]
) -> None:
    _, written = burst
    listed = run("memories").stdout
    for n, record in enumerate(written, 1):
        assert run.json("show", f"M{n}")["id"] == record["id"]
        assert f"M{n} " in listed
