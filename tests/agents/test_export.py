"""`contextd export`: the managed block in agent files, its hash guard and --check."""

import json
from pathlib import Path

import pytest

from tests.conftest import DECISION, POSTGRES, Cli

BEGIN = "<!-- contextd:begin -->"
END = "<!-- contextd:end -->"
CONSTRAINT = [
    "constrain",
    "Never edit an applied migration",
    "--hardness",
    "absolute",
    "--reason",
    "Applied migrations are checksummed in production; an edit breaks the next deploy",
]


def _block(text: str) -> str:
    return text[text.index(BEGIN) : text.index(END) + len(END)]


def test_export_creates_claude_md_with_the_briefing_inside_the_markers(
    repo: Path, run: Cli
) -> None:
    run.json(*CONSTRAINT)
    out = run.json("export", "claude")
    text = (repo / "CLAUDE.md").read_text(encoding="utf-8")
    assert out["action"] == "created" and out["path"] == str(repo / "CLAUDE.md")
    assert text.startswith(BEGIN) and text.rstrip().endswith(END)
    assert "Never edit an applied migration" in text
    assert out["records"] == 1 and out["left_out"] == 0


def test_text_outside_the_block_is_kept_byte_for_byte_when_the_block_is_replaced(
    repo: Path, run: Cli
) -> None:
    before = "# Orbit\r\n\r\nOur own notes, with  odd  spacing.\r\n"
    (repo / "CLAUDE.md").write_bytes(before.encode())
    run.json(*CONSTRAINT)
    assert run.json("export", "claude")["action"] == "added"
    after_text = "\n\nTrailing notes the user wrote after the block.\n"
    with (repo / "CLAUDE.md").open("ab") as handle:
        handle.write(after_text.encode())
    first = (repo / "CLAUDE.md").read_bytes().decode()
    run.json(*DECISION)
    assert run.json("export", "claude")["action"] == "replaced"
    second = (repo / "CLAUDE.md").read_bytes().decode()
    assert second.startswith(before)
    assert second.endswith(after_text)
    assert first[: first.index(BEGIN)] == second[: second.index(BEGIN)]
    assert "Use NATS for the task queue" in _block(second)
    assert second.count(BEGIN) == 1


def test_superseded_and_archived_records_are_never_in_the_block(repo: Path, run: Cli) -> None:
    old = run.json(*DECISION)["id"]
    new = run.json(*POSTGRES)["id"]
    run.json("supersede", old, "--by", new)
    gone = run.json("add", "The staging cluster runs on spot instances", "--category", "gotcha")
    run.json("archive", gone["id"])
    run.json("export", "codex")
    block = _block((repo / "AGENTS.md").read_text(encoding="utf-8"))
    assert "PostgreSQL SKIP LOCKED" in block
    assert "NATS" not in block and "spot instances" not in block


def test_a_small_budget_drops_detail_and_says_how_much_it_left_out(repo: Path, run: Cli) -> None:
    run.json(*CONSTRAINT)
    for i in range(6):
        run.json("add", f"Convention number {i} about naming the queues", "--category", "user")
    run("config", "set", "context.export_budget", "120")
    out = run.json("export", "generic")
    block = _block((repo / "CONTEXTD.md").read_text(encoding="utf-8"))
    assert out["left_out"] > 0
    assert f"{out['left_out']} more records left out" in block
    assert "Never edit an applied migration" in block  # durable knowledge first


def test_a_hand_edited_block_is_refused_until_force(repo: Path, run: Cli) -> None:
    run.json(*CONSTRAINT)
    run.json("export", "claude")
    path = repo / "CLAUDE.md"
    edited = path.read_text(encoding="utf-8").replace("Never edit", "Please never edit")
    path.write_text(edited, encoding="utf-8")
    refused = run("export", "claude")
    assert refused.exit_code == 4
    assert "--force" in refused.stderr and "edited by hand" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert path.read_text(encoding="utf-8") == edited
    forced = run.json("export", "claude", "--force")
    assert forced["action"] == "replaced"
    assert "Please never edit" not in path.read_text(encoding="utf-8")
    assert run("export", "claude").exit_code == 0  # the new hash is the one recorded


def test_edits_outside_the_block_are_not_a_reason_to_refuse(repo: Path, run: Cli) -> None:
    run.json(*CONSTRAINT)
    run.json("export", "claude")
    path = repo / "CLAUDE.md"
    path.write_text("My preface\n\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    assert run("export", "claude").exit_code == 0
    assert path.read_text(encoding="utf-8").startswith("My preface\n\n" + BEGIN)


def test_check_exits_1_when_missing_or_stale_0_when_current_and_writes_nothing(
    repo: Path, run: Cli
) -> None:
    run.json(*CONSTRAINT)
    path = repo / "GEMINI.md"
    missing = run("export", "gemini", "--check")
    assert missing.exit_code == 1 and not path.exists()
    run.json("export", "gemini")
    current = run("export", "gemini", "--check", "--json")
    assert current.exit_code == 0 and json.loads(current.stdout)["state"] == "current"
    before = path.read_bytes()
    run.json(*DECISION)
    stale = run("export", "gemini", "--check", "--json")
    assert stale.exit_code == 1 and json.loads(stale.stdout)["state"] == "stale"
    assert path.read_bytes() == before
    path.write_text("# just my notes\n", encoding="utf-8")
    assert run("export", "gemini", "--check").exit_code == 1


def test_cursor_rule_file_carries_the_front_matter_cursor_expects(repo: Path, run: Cli) -> None:
    run.json(*CONSTRAINT)
    run.json("export", "cursor")
    text = (repo / ".cursor" / "rules" / "contextd.mdc").read_text(encoding="utf-8")
    front, _, rest = text.removeprefix("---\n").partition("\n---\n")
    keys = dict(line.split(":", 1) for line in front.splitlines())
    assert set(keys) == {"description", "globs", "alwaysApply"}
    assert keys["alwaysApply"].strip() == "true" and keys["description"].strip()
    assert BEGIN in rest and "Never edit an applied migration" in rest
    run.json(*DECISION)
    run.json("export", "cursor")
    again = (repo / ".cursor" / "rules" / "contextd.mdc").read_text(encoding="utf-8")
    assert again.count("alwaysApply") == 1 and "Use NATS" in again


@pytest.mark.parametrize(
    ("target", "name"),
    [("claude", "CLAUDE.md"), ("codex", "AGENTS.md"), ("gemini", "GEMINI.md")],
)
def test_path_takes_a_folder_or_a_file(
    repo: Path, run: Cli, tmp_path: Path, target: str, name: str
) -> None:
    run.json(*CONSTRAINT)
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    assert run.json("export", target, "--path", str(folder))["path"] == str(folder / name)
    assert (folder / name).is_file()
    custom = folder / "notes" / "agent.md"
    run.json("export", target, "--path", str(custom))
    assert BEGIN in custom.read_text(encoding="utf-8")


def test_export_from_a_subfolder_writes_at_the_project_root(
    repo: Path, run: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    run.json(*CONSTRAINT)
    monkeypatch.chdir(sub)
    run.json("export", "claude")
    assert (repo / "CLAUDE.md").is_file() and not (sub / "CLAUDE.md").exists()


def test_an_unknown_target_is_a_usage_error(repo: Path, run: Cli) -> None:
    result = run("export", "vscode")
    assert result.exit_code == 2
    assert "vscode" in result.output and "Traceback" not in result.output


def test_an_unwritable_path_is_one_sentence(repo: Path, run: Cli) -> None:
    blocker = repo / "a-file"
    blocker.write_text("not a folder\n", encoding="utf-8")
    result = run("export", "claude", "--path", str(blocker / "sub" / "CLAUDE.md"))
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Cannot write" in lines[0] and "Traceback" not in result.output


def test_broken_markers_are_refused_and_the_file_is_left_alone(repo: Path, run: Cli) -> None:
    path = repo / "CLAUDE.md"
    broken = f"# Notes\n{BEGIN}\nhalf a block\n{BEGIN}\n"
    path.write_text(broken, encoding="utf-8")
    result = run("export", "claude")
    assert result.exit_code == 2 and "markers" in result.stderr
    assert path.read_text(encoding="utf-8") == broken


def test_a_record_quoting_the_end_marker_cannot_break_the_block(repo: Path, run: Cli) -> None:
    run.json("add", f"Agent files end their block with {END} on its own", "--category", "gotcha")
    run.json("export", "claude")
    text = (repo / "CLAUDE.md").read_text(encoding="utf-8")
    assert text.count(END) == 1 and text.rstrip().endswith(END)
    assert run("export", "claude", "--check").exit_code == 0


def test_export_outside_a_project_names_attach(
    tmp_path: Path, run: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("export", "claude")
    assert result.exit_code == 3 and "contextd attach" in result.stderr
