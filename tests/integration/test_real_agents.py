"""Each real agent reads the configuration `contextd setup` wrote and, where it has a command
for it, starts contextd's MCP server and reports it connected."""

import json

from tests.integration.conftest import Agents, Wired


def test_claude_code_connects_to_contextd(agents: Agents, wired: Wired) -> None:
    done = agents.run("claude", "mcp", "list", cwd=wired.project, env=wired.env)

    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("contextd:")), "")
    assert f"{wired.executable} mcp serve" in line, done.stdout + done.stderr
    assert line.endswith("Connected"), done.stdout + done.stderr


def test_gemini_cli_connects_to_contextd(agents: Agents, wired: Wired) -> None:
    done = agents.run("gemini", "mcp", "list", cwd=wired.project, env=wired.env)

    said = done.stdout + done.stderr  # it lists on stderr
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
