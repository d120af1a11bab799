"""pre-compact snapshots what the session was given; after the compaction (session-start with
source compact, or stop as a safety net) the records it lost are reported, by the hook, by
`contextd compaction-report` and by the MCP tool get_compaction_report."""

import json
import os
import re
import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
from mcp.types import Implementation, TextContent

from mcp import Client, StdioServerParameters
from tests.conftest import POSTGRES, Cli
from tests.hooks._support import configure, pre_compact, run_hook, session_start, stop
from tests.hooks.conftest import Seeded


def _mcp_report(repo: Path) -> Any:
    """get_compaction_report through a real `contextd mcp serve` in the project."""
    found: list[Any] = []

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "contextd", "mcp", "serve"],
            env=dict(os.environ),
            cwd=str(repo),
        )
        with anyio.fail_after(60):
            async with Client(
                params, client_info=Implementation(name="test-agent", version="1.0")
            ) as client:
                result = await client.call_tool("get_compaction_report", {})
                assert not result.is_error, result.content
                first = result.content[0]
                assert isinstance(first, TextContent)
                found.append((result.structured_content, first.text))

    anyio.run(main)
    return found[0]


def _lost_ids(report: dict[str, Any]) -> list[str]:
    return [item["id"] for item in report["lost"]]


def test_what_a_compaction_dropped_is_reported_everywhere(
    seeded: Seeded, run: Cli, home: Path
) -> None:
    repo = seeded.repo
    before = run_hook("session-start", session_start(repo, "sess-c"), cwd=repo).context
    assert seeded.decision in before and seeded.migration_rule in before
    snap = run_hook("pre-compact", pre_compact(repo, "sess-c", "manual"), cwd=repo)
    assert snap.returncode == 0, snap.stderr
    assert snap.reply is not None and set(snap.reply) == {"systemMessage"}  # for the user only
    # After the compaction only the absolute rule fits the briefing: the decision is lost.
    configure(home, "[context]\nsession_budget = 40\n")
    after = run_hook("session-start", session_start(repo, "sess-c", "compact"), cwd=repo)
    text = after.context
    assert text.startswith("<project-memory") and "\n# contextd briefing: orbit" in text
    assert "left out for the budget" in text
    report_at = text.index("contextd compaction report (manual compaction at ")
    assert "the session had been given 3 records" in text
    lost_section = text[report_at:]
    assert f"- [decision {seeded.decision}] Use NATS for the task queue" in lost_section

    cli_report = run.json("compaction-report")["report"]
    assert cli_report["trigger"] == "manual" and cli_report["given"] == 3
    assert seeded.decision in _lost_ids(cli_report)
    assert cli_report["written"] == []
    human = run("compaction-report")
    assert human.exit_code == 0 and seeded.decision in human.stdout

    structured, mcp_text = _mcp_report(repo)
    assert structured["report"]["trigger"] == "manual"
    assert seeded.decision in _lost_ids(structured["report"])
    assert seeded.decision in mcp_text


def test_a_record_briefed_again_after_the_compaction_is_not_reported_lost(
    seeded: Seeded, run: Cli
) -> None:
    repo = seeded.repo
    run_hook("session-start", session_start(repo, "sess-r"), cwd=repo)
    run_hook("pre-compact", pre_compact(repo, "sess-r", "auto"), cwd=repo)
    after = run_hook("session-start", session_start(repo, "sess-r", "compact"), cwd=repo)
    assert seeded.migration_rule in after.context.split("contextd compaction report")[0]
    report = run.json("compaction-report")["report"]
    assert report["given"] == 3
    assert _lost_ids(report) == []  # the new briefing just gave all three again


def test_stop_computes_the_report_when_no_session_start_follows(
    seeded: Seeded, run: Cli, home: Path
) -> None:
    repo = seeded.repo
    run_hook("session-start", session_start(repo, "sess-s"), cwd=repo)
    written = run.json(*POSTGRES)  # recorded during the session, before the compaction
    run_hook("pre-compact", pre_compact(repo, "sess-s", "auto"), cwd=repo)
    done = run_hook("stop", stop(repo, "sess-s"), cwd=repo)
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""
    with closing(sqlite3.connect(home / "contextd.db")) as conn:
        rows = conn.execute(
            "SELECT session_key, trigger, report FROM compaction_snapshots"
        ).fetchall()
    assert len(rows) == 1
    session_key, trigger, saved = rows[0]
    assert (session_key, trigger) == ("sess-s", "auto")
    assert saved is not None, "stop did not compute the report"
    stored = json.loads(saved)
    assert stored["given"] == 3
    assert {item["id"] for item in stored["written"]} == {written["id"]}
    report = run.json("compaction-report")["report"]
    assert report["trigger"] == "auto"
    assert set(_lost_ids(report)) == {seeded.decision, seeded.logging_rule, seeded.migration_rule}
    assert [item["id"] for item in report["written"]] == [written["id"]]


def test_no_report_without_a_compaction_of_this_session(seeded: Seeded, run: Cli) -> None:
    repo = seeded.repo
    assert run.json("compaction-report") == {"report": None}
    run_hook("session-start", session_start(repo, "sess-x"), cwd=repo)
    run_hook("pre-compact", pre_compact(repo, "sess-x"), cwd=repo)
    # Another session resuming after its own (unrecorded) compaction gets no foreign report.
    other = run_hook("session-start", session_start(repo, "sess-y", "compact"), cwd=repo)
    assert seeded.decision in other.context
    assert "compaction report" not in other.context


def test_pre_compact_tells_the_user_what_it_snapshotted_and_what_the_scan_flagged(
    seeded: Seeded, run: Cli
) -> None:
    repo = seeded.repo
    thin = run.json("add", "Staging deploys need the VPN", "--category", "gotcha")  # no tags
    run_hook("session-start", session_start(repo, "sess-u"), cwd=repo)
    snap = run_hook("pre-compact", pre_compact(repo, "sess-u", "auto"), cwd=repo)
    assert snap.returncode == 0, snap.stderr
    snap.stdout.decode("ascii")
    assert snap.reply is not None and set(snap.reply) == {"systemMessage"}
    message = snap.reply["systemMessage"]
    assert re.match(
        r"contextd: before this auto compaction, snapshotted the [1-9]\d* records? this "
        r"session was given in orbit;",
        message,
    ), message
    assert "The quality scan flagged " in message
    assert f"- {thin['id']} missing tags: Staging deploys need the VPN" in message


def test_gemini_pre_compress_gets_the_same_message_as_a_system_message(seeded: Seeded) -> None:
    from tests.hooks.agent_payloads import gemini_pre_compress

    done = run_hook("pre-compact", gemini_pre_compress(seeded.repo), cwd=seeded.repo)
    assert done.returncode == 0, done.stderr
    assert done.reply is not None and set(done.reply) == {"systemMessage"}
    assert "snapshotted the 0 records this session was given" in done.reply["systemMessage"]
