"""The real Claude Code CLI, configured by `contextd setup --url … --token-env VAR`, reports
a running `contextd serve` connected: its HTTP entry carries the token by variable, and the
server admits it. Server and agent run in one network namespace (loopback only, where the
system allows one), so the agent reaches the server and nothing else."""

import json
import subprocess
import sys
from pathlib import Path

from tests.integration.conftest import RUN_TIMEOUT_S, Agents, Wired

_DRIVER = """
import json, os, subprocess, sys

exe, agents = sys.argv[1], sys.argv[2]
serve = subprocess.Popen(
    [exe, "serve", "--port", "0", "--json"], stdout=subprocess.PIPE, text=True, encoding="utf-8"
)
try:
    url = json.loads(serve.stdout.readline())["url"]
    subprocess.run(
        [exe, "setup", "--agent", "claude", "--url", url, "--token-env", "CONTEXTD_TOKEN"],
        check=True, capture_output=True,
    )
    done = subprocess.run(
        [os.path.join(agents, "claude"), "mcp", "list"], capture_output=True, text=True,
        encoding="utf-8", errors="replace", timeout=100, stdin=subprocess.DEVNULL,
    )
    print(json.dumps({"url": url, "out": done.stdout, "err": done.stderr}))
finally:
    serve.terminate()
    serve.wait(timeout=30)
"""


def test_claude_code_connects_to_contextd_serve_over_http(agents: Agents, wired: Wired) -> None:
    made = subprocess.run(
        [str(wired.executable), "token", "create", "ada", "--json"],
        cwd=wired.project,
        env=wired.env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    env = wired.env | {"CONTEXTD_TOKEN": json.loads(made.stdout)["token"]}
    driver = [sys.executable, "-c", _DRIVER, str(wired.executable), str(agents.bin_dir)]
    done = subprocess.run(
        agents.with_loopback(driver),
        cwd=wired.project,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=RUN_TIMEOUT_S + 60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout.strip().splitlines()[-1])
    line = next((ln for ln in said["out"].splitlines() if ln.startswith("contextd:")), "")
    assert said["url"] in line, said
    assert line.endswith("Connected"), said
    written = (Path(wired.home) / ".claude.json").read_text(encoding="utf-8")
    assert "${CONTEXTD_TOKEN}" in written and env["CONTEXTD_TOKEN"] not in written


_TURN = """
import json, os, subprocess, sys

exe, agents, log = sys.argv[1], sys.argv[2], sys.argv[3]
serve = subprocess.Popen(
    [exe, "serve", "--port", "0", "--json"], stdout=subprocess.PIPE, text=True, encoding="utf-8"
)
try:
    url = json.loads(serve.stdout.readline())["url"]
    subprocess.run(
        [exe, "setup", "--agent", "claude", "--url", url, "--token-env", "CONTEXTD_TOKEN"],
        check=True, capture_output=True,
    )
    claude = [
        os.path.join(agents, "claude"), "-p", "Where should the next worker read tasks from?",
        "--allowedTools", "mcp__contextd__get_context",
    ]
    stand_in = [sys.executable, "-m", "tests.integration.stand_in_api", "anthropic", log, "--"]
    done = subprocess.run(stand_in + claude, capture_output=True, text=True, encoding="utf-8",
                          errors="replace", timeout=200, stdin=subprocess.DEVNULL)
    print(json.dumps({"out": done.stdout, "err": done.stderr, "code": done.returncode}))
finally:
    serve.terminate()
    serve.wait(timeout=30)
"""


def test_a_claude_code_turn_carries_a_get_context_answer_over_http(
    agents: Agents, wired: Wired, tmp_path: Path
) -> None:
    """One turn against the stand-in model API: the model calls get_context, Claude Code
    calls it on `contextd serve` with the developer's token, and the answer (the decision a
    teammate recorded, fenced as data) is in what Claude Code sends the model next."""
    from tests.conftest import DECISION

    cli = [str(wired.executable), *DECISION, "--project", "orbit"]
    subprocess.run(cli, cwd=wired.project, env=wired.env, capture_output=True, check=True)
    made = subprocess.run(
        [str(wired.executable), "token", "create", "ada", "--project", "orbit", "--json"],
        cwd=wired.project,
        env=wired.env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    log = tmp_path / "requests.jsonl"
    env = wired.env | {
        "CONTEXTD_TOKEN": json.loads(made.stdout)["token"],
        "ANTHROPIC_API_KEY": "sk-ant-offline-test",
        "ENABLE_TOOL_SEARCH": "false",  # MCP tools offered to the model directly, not deferred
        "STAND_IN_TOOL": "mcp__contextd__get_context",
        "STAND_IN_TOOL_INPUT": json.dumps({"query": "task queue workers"}),
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    driver = [sys.executable, "-c", _TURN, str(wired.executable), str(agents.bin_dir), str(log)]
    done = subprocess.run(
        agents.with_loopback(driver),
        cwd=wired.project,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout.strip().splitlines()[-1])
    bodies = [json.loads(line)["body"] for line in log.read_text(encoding="utf-8").splitlines()]
    answered = [b for b in bodies if "tool_result" in b and "toolu_stand_in" in b]
    offered = [[t.get("name") for t in json.loads(b or "{}").get("tools") or []] for b in bodies]
    assert answered, (said, offered)
    assert "Use NATS for the task queue" in answered[-1], said
    assert "project-memory" in answered[-1]
