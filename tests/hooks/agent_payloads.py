"""Hook payloads shaped as each agent documents them (fields, names and value shapes; the
values are ours).

- Claude Code: code.claude.com/docs/en/hooks (common fields, SessionStart, PostToolUse).
- Gemini CLI: docs/hooks/reference.md in google-gemini/gemini-cli (base input with
  `timestamp`; AfterTool's `tool_response` holds `llmContent`, `returnDisplay`, `error`), and
  its shell tool, whose `llmContent` reads "Output: ..." then "Exit Code: N" when N is not 0.
- Cursor: cursor.com/docs/agent/hooks (common fields with `workspace_roots`, no `cwd`;
  sessionStart adds `session_id`, `is_background_agent`, `composer_mode`).
- Codex CLI: developers.openai.com/codex/hooks and the hook input schemas in openai/codex
  (`turn_id`, `model`, `permission_mode`; apply_patch passes the patch as `tool_input.command`).
"""

from pathlib import Path
from typing import Any


def cursor_session_start(roots: list[Path]) -> dict[str, Any]:
    return {
        "conversation_id": "c3b1e0f2-6a4d-4f7e-9a51-2d8c0e4b7a10",
        "generation_id": "a7f9c2d4-1b3e-4c5a-8d6f-0e9b1c2a3d4f",
        "model": "claude-sonnet-4.5",
        "hook_event_name": "sessionStart",
        "cursor_version": "2.1.20",
        "workspace_roots": [str(r) for r in roots],
        "user_email": "ada@example.com",
        "transcript_path": None,
        "session_id": "c3b1e0f2-6a4d-4f7e-9a51-2d8c0e4b7a10",
        "is_background_agent": False,
        "composer_mode": "agent",
    }


def _gemini_common(cwd: Path, event: str) -> dict[str, Any]:
    return {
        "session_id": "8c5e1f0a-2b7d-4e3c-9f61-a0b2c4d6e8f0",
        "transcript_path": "/home/ada/.gemini/tmp/4f2a/chats/session-2026-12-01T09-30.json",
        "cwd": str(cwd),
        "hook_event_name": event,
        "timestamp": "2026-12-01T09:31:12.345Z",
    }


def gemini_shell(cwd: Path, command: str, output: str, exit_code: int = 0) -> dict[str, Any]:
    """AfterTool for run_shell_command; a non-zero exit adds `Exit Code:` to llmContent."""
    lines = [f"Output: {output or '(empty)'}"]
    if exit_code:
        lines.append(f"Exit Code: {exit_code}")
    lines.append("Process Group PGID: 48213")
    content = "\n".join(lines)
    return _gemini_common(cwd, "AfterTool") | {
        "tool_name": "run_shell_command",
        "tool_input": {"command": command, "description": "Commit the staged work."},
        "tool_response": {
            "llmContent": f"<untrusted_context>\n{content}\n</untrusted_context>",
            "returnDisplay": output,
        },
    }


def gemini_write_file(cwd: Path, file_path: str) -> dict[str, Any]:
    return _gemini_common(cwd, "AfterTool") | {
        "tool_name": "write_file",
        "tool_input": {"file_path": file_path, "content": "-- new index\n"},
        "tool_response": {
            "llmContent": f"Successfully created and wrote to new file: {file_path}.",
            "returnDisplay": {"fileDiff": "+-- new index\n", "fileName": Path(file_path).name},
        },
    }


def gemini_session_start(cwd: Path) -> dict[str, Any]:
    return _gemini_common(cwd, "SessionStart") | {"source": "startup"}


def gemini_before_agent(cwd: Path, prompt: str) -> dict[str, Any]:
    return _gemini_common(cwd, "BeforeAgent") | {"prompt": prompt}


def gemini_pre_compress(cwd: Path) -> dict[str, Any]:
    return _gemini_common(cwd, "PreCompress") | {"trigger": "auto"}


def _codex_common(cwd: Path, event: str) -> dict[str, Any]:
    return {
        "session_id": "019a3c2e-7d41-7b90-a5e2-3f6c8d1e0b24",
        "turn_id": "019a3c2e-9f02-7c11-8e4d-5a7b9c0d1e2f",
        "transcript_path": "/home/ada/.codex/sessions/2026/12/01/rollout-019a3c2e.jsonl",
        "cwd": str(cwd),
        "hook_event_name": event,
        "model": "gpt-5-codex",
        "permission_mode": "default",
    }


def codex_apply_patch(cwd: Path, *relative: str) -> dict[str, Any]:
    body = "".join(f"*** Update File: {path}\n@@\n-old\n+new\n" for path in relative)
    return _codex_common(cwd, "PostToolUse") | {
        "tool_name": "apply_patch",
        "tool_use_id": "call_5Qx2",
        "tool_input": {"command": f"*** Begin Patch\n{body}*** End Patch\n"},
        "tool_response": "Success. Updated the following files:\n"
        + "".join(f"M {path}\n" for path in relative),
    }


def codex_bash(cwd: Path, command: str, output: str) -> dict[str, Any]:
    return _codex_common(cwd, "PostToolUse") | {
        "tool_name": "Bash",
        "tool_use_id": "call_8Kd1",
        "tool_input": {"command": command},
        "tool_response": output,
    }


def claude_session_start(cwd: Path) -> dict[str, Any]:
    return {
        "session_id": "5d0c8a3e-41f2-4b6d-9e07-c1a2b3d4e5f6",
        "transcript_path": "/home/ada/.claude/projects/-tmp/5d0c8a3e.jsonl",
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
