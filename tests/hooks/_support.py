"""Running `contextd hook EVENT` the way an agent does: a fresh process, the hook's JSON on
stdin, Claude Code's JSON reply on stdout."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BASE_CONFIG = '[embeddings]\nprovider = "hashing"\n[hooks]\nautostart_daemon = false\n'
AGENT_EVENT = {
    "session-start": "SessionStart",
    "prompt": "UserPromptSubmit",
    "post-edit": "PostToolUse",
    "post-bash": "PostToolUse",
    "pre-compact": "PreCompact",
    "stop": "Stop",
    "session-end": "SessionEnd",
}
EVENTS = tuple(AGENT_EVENT)
HOOK_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class HookRun:
    event: str
    returncode: int
    stdout: bytes
    stderr: bytes
    elapsed: float

    @property
    def reply(self) -> dict[str, Any] | None:
        """The decoded JSON reply, None when the hook printed nothing."""
        if not self.stdout.strip():
            return None
        decoded = json.loads(self.stdout)
        assert isinstance(decoded, dict), self.stdout
        return decoded

    @property
    def context(self) -> str:
        """The additionalContext the agent receives ("" when the hook stayed silent)."""
        reply = self.reply
        if reply is None:
            return ""
        assert set(reply) == {"hookSpecificOutput"}, reply
        output = reply["hookSpecificOutput"]
        assert output["hookEventName"] == AGENT_EVENT[self.event], output
        text = output["additionalContext"]
        assert isinstance(text, str) and text, output
        return text


def hook_env(**overrides: str | None) -> dict[str, str]:
    """The test's environment (CONTEXTD_HOME and the private git config), with overrides."""
    env = dict(os.environ)
    for name, value in overrides.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def run_hook(
    event: str,
    payload: Mapping[str, Any] | Sequence[Any] | None = None,
    *,
    cwd: Path,
    raw: bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> HookRun:
    """`python -m contextd hook EVENT` in `cwd`, fed `payload` as JSON (or `raw` bytes)."""
    data = raw if raw is not None else json.dumps(payload).encode("utf-8")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "contextd", "hook", event],
        input=data,
        capture_output=True,
        cwd=cwd,
        env=dict(env) if env is not None else hook_env(),
        timeout=HOOK_TIMEOUT_S,
        check=False,
    )
    return HookRun(event, done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def run_hooks(
    calls: Sequence[tuple[str, Any]], *, cwd: Path, raw: bytes | None = None
) -> list[HookRun]:
    """Several hooks, one after the other (side by side, on a busy machine, the in-process
    path's imports alone can outlast a hook's time budget)."""
    return [run_hook(event, payload, cwd=cwd, raw=raw) for event, payload in calls]


def configure(home: Path, extra: str = "") -> None:
    """Rewrite config.toml: the test defaults plus `extra` TOML tables."""
    (home / "config.toml").write_text(BASE_CONFIG + extra, encoding="utf-8")


# --- Claude Code's payloads -------------------------------------------------------------


def _common(cwd: Path, session: str, event: str) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": f"/home/dev/.claude/projects/-work/{session}.jsonl",
        "cwd": str(cwd),
        "hook_event_name": event,
    }


def session_start(cwd: Path, session: str = "sess-1", source: str = "startup") -> dict[str, Any]:
    return _common(cwd, session, "SessionStart") | {"source": source}


def user_prompt(cwd: Path, prompt: str, session: str = "sess-1") -> dict[str, Any]:
    return _common(cwd, session, "UserPromptSubmit") | {"prompt": prompt}


def edit(cwd: Path, file_path: str, session: str = "sess-1", tool: str = "Edit") -> dict[str, Any]:
    if tool == "NotebookEdit":
        tool_input: dict[str, Any] = {"notebook_path": file_path, "new_source": "x = 1"}
        response: dict[str, Any] = {"new_source": "x = 1", "cell_type": "code"}
    elif tool == "Write":
        tool_input = {"file_path": file_path, "content": "-- new\n"}
        response = {"type": "create", "filePath": file_path, "content": "-- new\n"}
    else:
        tool_input = {"file_path": file_path, "old_string": "a", "new_string": "b"}
        response = {"filePath": file_path, "oldString": "a", "newString": "b"}
    return _common(cwd, session, "PostToolUse") | {
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_response": response,
    }


def bash(cwd: Path, command: str, stdout: str = "", session: str = "sess-1") -> dict[str, Any]:
    return _common(cwd, session, "PostToolUse") | {
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "run it"},
        "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False},
    }


def pre_compact(cwd: Path, session: str = "sess-1", trigger: str = "manual") -> dict[str, Any]:
    return _common(cwd, session, "PreCompact") | {
        "trigger": trigger,
        "custom_instructions": "keep the queue work" if trigger == "manual" else "",
    }


def stop(cwd: Path, session: str = "sess-1") -> dict[str, Any]:
    return _common(cwd, session, "Stop") | {"stop_hook_active": False}


def session_end(cwd: Path, session: str = "sess-1") -> dict[str, Any]:
    return _common(cwd, session, "SessionEnd") | {"reason": "prompt_input_exit"}


def payload_for(event: str, cwd: Path, session: str = "sess-1") -> dict[str, Any]:
    """A plausible payload for any event (the fault tests feed each of them)."""
    builders = {
        "session-start": lambda: session_start(cwd, session),
        "prompt": lambda: user_prompt(
            cwd, "Why did we pick NATS for the task queue after the deploy issues?", session
        ),
        "post-edit": lambda: edit(cwd, str(cwd / "migrations" / "0042_add_index.sql"), session),
        "post-bash": lambda: bash(cwd, 'git commit -m "Add the index"', session=session),
        "pre-compact": lambda: pre_compact(cwd, session),
        "stop": lambda: stop(cwd, session),
        "session-end": lambda: session_end(cwd, session),
    }
    return builders[event]()


def daemon_processes(home: Path) -> list[int]:
    """Pids of `contextd ... daemon run` processes started for this home (by a hook)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"contextd" in argv and b"daemon" in argv and os.fsencode(home) in argv:
            found.append(int(entry.name))
    return found


def end_processes(pids: list[int]) -> None:
    """SIGTERM, then SIGKILL what is still there after a few seconds."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
        time.sleep(0.05)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
