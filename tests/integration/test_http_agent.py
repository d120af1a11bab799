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
