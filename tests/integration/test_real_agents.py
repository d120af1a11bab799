"""Each real agent reads the configuration `contextd setup` wrote and, where it has a command
for it, starts contextd's MCP server and reports it connected."""

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import DECISION
from tests.integration.conftest import Agents, Wired
from tests.integration.stand_in_api import ANSWER, CAPTURED, RECORD_TOOL

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_claude_code_connects_to_contextd(agents: Agents, wired: Wired) -> None:
    done = agents.run("claude", "mcp", "list", cwd=wired.project, env=wired.env)

    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("contextd:")), "")
    assert f"{wired.executable} mcp serve" in line, done.stdout + done.stderr
    assert line.endswith("Connected"), done.stdout + done.stderr


def test_gemini_cli_connects_to_contextd(agents: Agents, wired: Wired) -> None:
    # `gemini mcp list` gives each server a fixed 5 s to start and answer a ping, which a
    # machine running this suite on both cores can exceed: a second look is allowed.
    for _ in range(3):
        done = agents.run("gemini", "mcp", "list", cwd=wired.project, env=wired.env)
        said = done.stdout + done.stderr  # it lists on stderr
        if "Disconnected" not in said:
            break
    line = next((ln for ln in said.splitlines() if "contextd:" in ln), "")
    assert f"{wired.executable} mcp serve" in line, said
    assert line.endswith("- Connected"), said


def test_opencode_connects_to_contextd(agents: Agents, wired: Wired) -> None:
    done = agents.run("opencode", "mcp", "list", cwd=wired.project, env=wired.env)

    lines = [ln for ln in done.stdout.splitlines() if "contextd" in ln]
    assert lines and "connected" in lines[0], done.stdout + done.stderr
    assert any(f"{wired.executable} mcp serve" in ln for ln in lines), done.stdout


def test_codex_reads_the_server_and_what_it_must_forward(
    agents: Agents, wired: Wired, home: object
) -> None:
    done = agents.run("codex", "mcp", "get", "contextd", "--json", cwd=wired.project, env=wired.env)

    assert done.returncode == 0, done.stderr
    server = json.loads(done.stdout)
    assert server["enabled"] is True
    transport = server["transport"]
    assert transport["command"] == str(wired.executable)
    assert transport["args"] == ["mcp", "serve"]
    assert transport["env"] == {"CONTEXTD_HOME": wired.env["CONTEXTD_HOME"]}
    assert transport["env_vars"] == ["CONTEXTD_PROJECT"]


def test_claude_code_hands_the_session_briefing_to_its_model(
    agents: Agents, wired: Wired, tmp_path: Path
) -> None:
    """A real turn of Claude Code against a stand-in API on loopback: the SessionStart hook
    setup wrote runs, and the briefing it prints is in what Claude Code sends its model."""
    record(wired)
    log = tmp_path / "requests.jsonl"
    claude = [str(agents.bin_dir / "claude"), "-p", "Where should the next worker read tasks from?"]
    env = wired.env | {"ANTHROPIC_API_KEY": "sk-ant-offline-test"}

    turn = one_turn(agents, wired, "anthropic", claude, env, log)

    assert "# contextd briefing: orbit" in turn
    assert "Use NATS for the task queue" in turn


def test_gemini_cli_hands_the_session_briefing_to_its_model(
    agents: Agents, wired: Wired, tmp_path: Path
) -> None:
    """The same with Gemini CLI, its hooks on by default: SessionStart's briefing is in the
    request it sends (the model is named, so no routing call precedes the turn)."""
    record(wired)
    settings = wired.home / ".gemini" / "settings.json"
    data = json.loads(settings.read_text(encoding="utf-8"))
    data["security"] = {"auth": {"selectedType": "gemini-api-key"}}  # an API key, no login
    settings.write_text(json.dumps(data, indent=2), encoding="utf-8")
    log = tmp_path / "requests.jsonl"
    prompt = ["-m", "gemini-2.5-flash", "-p", "Where should the next worker read tasks from?"]
    gemini = [str(agents.bin_dir / "gemini"), *prompt]
    env = wired.env | {"GEMINI_API_KEY": "offline-test"}

    turn = one_turn(agents, wired, "gemini", gemini, env, log)

    assert "# contextd briefing: orbit" in turn
    assert "Use NATS for the task queue" in turn


def record(wired: Wired) -> None:
    cli = [str(wired.executable), *DECISION]
    recorded = subprocess.run(
        cli, cwd=wired.project, env=wired.env, capture_output=True, timeout=60
    )
    assert recorded.returncode == 0, recorded.stderr


def one_turn(
    agents: Agents, wired: Wired, flavour: str, command: list[str], env: dict[str, str], log: Path
) -> str:
    """Run one prompt of an agent against the stand-in API; the request carrying the prompt."""
    module = "tests.integration.stand_in_api"
    stand_in = [sys.executable, "-m", module, flavour, str(log), "--", *command]
    done = subprocess.run(
        agents.with_loopback(stand_in),
        cwd=wired.project,
        env=env | {"PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=240,
        check=False,
    )
    assert done.returncode == 0 and ANSWER in done.stdout, done.stdout + done.stderr
    bodies = [json.loads(line)["body"] for line in log.read_text(encoding="utf-8").splitlines()]
    turns = [b for b in bodies if "Where should the next worker read tasks from?" in b]
    assert turns, bodies
    return turns[0]


def test_claude_code_records_what_the_stop_hook_asks_for_and_it_waits_for_review(
    agents: Agents, wired: Wired, tmp_path: Path
) -> None:
    """A real session of Claude Code against a scripted stand-in model: its turn writes a
    file, so the Stop hook asks it to record; that request reaches the model's next request,
    the model's record_decision call reaches contextd's MCP server, and with
    `[capture] review = "agent"` the decision waits for a person instead of being memory."""
    config = wired.env["CONTEXTD_HOME"] + "/config.toml"
    with open(config, "a", encoding="utf-8") as handle:
        handle.write('\n[capture]\nreview = "agent"\n')
    log = tmp_path / "requests.jsonl"
    allowed = f"Write,ToolSearch,{RECORD_TOOL}"
    claude = [
        str(agents.bin_dir / "claude"), "-p", "Make failed jobs give up after 8 retries.",
        "--allowedTools", allowed,
    ]  # fmt: skip
    env = wired.env | {"ANTHROPIC_API_KEY": "sk-ant-offline-test"}

    module = "tests.integration.stand_in_api"
    stand_in = [sys.executable, "-m", module, "anthropic-capture", str(log), "--", *claude]
    done = subprocess.run(
        agents.with_loopback(stand_in),
        cwd=wired.project,
        env=env | {"PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=240,
        check=False,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert (wired.project / "worker.py").is_file(), done.stdout + done.stderr
    bodies = [json.loads(line)["body"] for line in log.read_text(encoding="utf-8").splitlines()]
    asked = [b for b in bodies if "Record nothing trivial" in b and RECORD_TOOL in b]
    assert asked, "the Stop hook's request never reached the model"
    assert "worker.py" in asked[0]  # with the files the session changed
    answered = [b for b in bodies if "toolu_stand_in_record" in b and "tool_result" in b]
    assert answered, done.stdout + done.stderr
    review = subprocess.run(
        [str(wired.executable), "review", "--json"],
        cwd=wired.project,
        env=wired.env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=True,
    )
    waiting = json.loads(review.stdout)["waiting"]
    assert [w["title"] for w in waiting] == [CAPTURED["summary"]]
    assert waiting[0]["asked_by"] == "agent"
    memories = subprocess.run(
        [str(wired.executable), "memories", "--json"],
        cwd=wired.project,
        env=wired.env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=True,
    )
    assert CAPTURED["summary"] not in memories.stdout  # not memory until a person approves
