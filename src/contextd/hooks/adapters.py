"""Each agent's documented hook payload, turned into the one event contextd's handlers read.

Claude Code, Gemini CLI, Cursor and Codex CLI send JSON that looks alike and is not: Cursor
names the project in `workspace_roots` (no `cwd`), Gemini's tool result is `llmContent` and
`returnDisplay` (no `stdout`), Codex edits files through `apply_patch`, whose paths sit in the
patch text. The agent is told from the payload itself (see `agent_of`), so a hook command
written by hand, or by an older setup, needs no flag.
"""

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from msgspec import Struct

__all__ = ["ADAPTERS", "HookEvent", "adapt", "agent_of"]

# Events only Gemini CLI sends (it shares SessionStart and the rest with Claude Code).
_GEMINI_EVENTS = frozenset(
    {"BeforeAgent", "AfterAgent", "BeforeTool", "AfterTool", "PreCompress", "BeforeModel"}
    | {"AfterModel", "BeforeToolSelection"}
)
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)\s*$", re.MULTILINE)
_PATCH_PATH = re.compile(
    r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.MULTILINE
)


class HookEvent(Struct, frozen=True):
    """What a hook is about, in contextd's terms, whichever agent sent it."""

    agent: str  # claude | gemini | cursor | codex
    session_key: str
    cwd: Path  # where relative paths resolve and git runs
    folders: tuple[Path, ...]  # where to look for the attached project, in order
    source: str = ""  # why a session started: startup, resume, clear, compact
    prompt: str = ""
    trigger: str = ""  # what started a compaction: auto, manual
    tool: str = ""
    edited: tuple[Path, ...] = ()  # files a tool wrote
    command: str = ""  # the shell command a tool ran
    output: str = ""  # what that command printed
    failed: bool = False  # the tool reported an error, an interruption or a non-zero exit
    continuing: bool = False  # an end-of-turn hook already made the agent go on (no loops)
    transcript: Path | None = None  # the session's transcript file, when the agent names one


def agent_of(payload: dict[str, Any]) -> str:
    """Which agent sent `payload`, from the fields each one documents."""
    event = str(payload.get("hook_event_name") or "")
    if "workspace_roots" in payload or "cursor_version" in payload or event[:1].islower():
        return "cursor"  # camelCase events (sessionStart, afterFileEdit, ...)
    if event in _GEMINI_EVENTS or "timestamp" in payload:
        return "gemini"  # every Gemini payload carries an ISO `timestamp`
    if "turn_id" in payload:
        return "codex"  # Codex's turn-scoped events carry the turn
    return "claude"


def adapt(payload: dict[str, Any], folder: Path, project_dirs: Sequence[str] = ()) -> HookEvent:
    """The event in `payload`, for a hook run in `folder` with the agent's project-folder
    variables `project_dirs` (CLAUDE_PROJECT_DIR and the like)."""
    agent = agent_of(payload)
    return ADAPTERS[agent](payload, folder, tuple(Path(d) for d in project_dirs))


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _folders(named: Sequence[object], dirs: tuple[Path, ...], folder: Path) -> tuple[Path, ...]:
    """Absolute folders in order of authority, each once: those the payload names, then the
    agent's project-folder variables, then the folder the hook runs in."""
    found: dict[Path, None] = {}
    for item in named:
        if isinstance(item, str) and item and Path(item).is_absolute():
            found.setdefault(Path(item))
    for item in (*dirs, folder):
        found.setdefault(item)
    return tuple(found)


def _common(
    agent: str,
    payload: dict[str, Any],
    named: Sequence[object],
    dirs: tuple[Path, ...],
    folder: Path,
) -> dict[str, Any]:
    """The fields every agent's payload carries, under contextd's names."""
    folders = _folders(named, dirs, folder)
    session = payload.get("session_id") or payload.get("conversation_id") or "unknown"
    return {
        "agent": agent,
        "session_key": str(session),
        "cwd": folders[0],
        "folders": folders,
        "source": _text(payload.get("source")),
        "prompt": _text(payload.get("prompt")),
        "trigger": _text(payload.get("trigger")),
        "tool": _text(payload.get("tool_name")),
        "continuing": payload.get("stop_hook_active") is True,
        "transcript": _transcript(payload.get("transcript_path")),
    }


def _transcript(value: object) -> Path | None:
    if isinstance(value, str) and value and "\0" not in value and Path(value).is_absolute():
        return Path(value)
    return None


def _edited(cwd: Path, paths: Sequence[object]) -> tuple[Path, ...]:
    found = [Path(p) for p in paths if isinstance(p, str) and p]
    return tuple(dict.fromkeys(p if p.is_absolute() else cwd / p for p in found))


def _claude(payload: dict[str, Any], folder: Path, dirs: tuple[Path, ...]) -> HookEvent:
    """Claude Code (code.claude.com/docs/en/hooks): `cwd`; Edit, Write and MultiEdit name
    `tool_input.file_path`, NotebookEdit `notebook_path`; Bash answers with `stdout`,
    `stderr` and `interrupted`."""
    base = _common("claude", payload, [payload.get("cwd")], dirs, folder)
    tool_input = _object(payload.get("tool_input"))
    response = _object(payload.get("tool_response"))
    edited = [tool_input.get("file_path") or tool_input.get("notebook_path")]
    output = "\n".join(_text(response.get(k)) for k in ("stdout", "stderr"))
    return HookEvent(
        **base,
        edited=_edited(base["cwd"], edited),
        command=_text(tool_input.get("command")),
        output=output.strip(),
        failed=bool(response.get("interrupted")),
    )


def _gemini(payload: dict[str, Any], folder: Path, dirs: tuple[Path, ...]) -> HookEvent:
    """Gemini CLI (geminicli.com/docs/hooks/reference): `cwd`; write_file and replace name
    `tool_input.file_path`; a tool answers with `llmContent`, `returnDisplay` and an optional
    `error`, and run_shell_command's `llmContent` ends with `Exit Code: N` when N is not 0."""
    base = _common("gemini", payload, [payload.get("cwd")], dirs, folder)
    tool_input = _object(payload.get("tool_input"))
    response = _object(payload.get("tool_response"))
    content = _gemini_text(response.get("llmContent"))
    exit_code = _EXIT_CODE.search(content)
    failed = bool(response.get("error")) or (exit_code is not None and exit_code.group(1) != "0")
    shown = _gemini_text(response.get("returnDisplay"))
    return HookEvent(
        **base,
        edited=_edited(base["cwd"], [tool_input.get("file_path")]),
        command=_text(tool_input.get("command")),
        output="\n".join(part for part in (content, shown) if part),
        failed=failed,
    )


def _gemini_text(value: object) -> str:
    """`llmContent` is a string, a part ({"text": ...}) or a list of them; `returnDisplay` a
    string or a structured display (a file diff, terminal lines) with no text to read."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return _text(value.get("text"))
    if isinstance(value, list):
        return "\n".join(_gemini_text(item) for item in value)
    return ""


def _cursor(payload: dict[str, Any], folder: Path, dirs: tuple[Path, ...]) -> HookEvent:
    """Cursor (cursor.com/docs/agent/hooks): every payload names the open folders in
    `workspace_roots` and none has a top-level `cwd` but the shell events; afterFileEdit names
    `file_path`, afterShellExecution `command` and `output`."""
    roots = payload.get("workspace_roots")
    named = [payload.get("cwd"), *(roots if isinstance(roots, list) else [])]
    base = _common("cursor", payload, named, dirs, folder)
    return HookEvent(
        **base,
        edited=_edited(base["cwd"], [payload.get("file_path")]),
        command=_text(payload.get("command")),
        output=_text(payload.get("output")),
    )


def _codex(payload: dict[str, Any], folder: Path, dirs: tuple[Path, ...]) -> HookEvent:
    """Codex CLI (developers.openai.com/codex/hooks): `cwd`; Bash and apply_patch both pass
    `tool_input.command` (for apply_patch, the patch, whose `*** Update File:` lines name the
    files); `tool_response` is the tool's output."""
    base = _common("codex", payload, [payload.get("cwd")], dirs, folder)
    command = _text(_object(payload.get("tool_input")).get("command"))
    response = payload.get("tool_response")
    if base["tool"] == "apply_patch":
        named = [a or b for a, b in _PATCH_PATH.findall(command)]
        return HookEvent(**base, edited=_edited(base["cwd"], named))
    output, failed = _codex_output(response)
    return HookEvent(**base, command=command, output=output, failed=failed)


def _codex_output(response: object) -> tuple[str, bool]:
    if isinstance(response, str):
        return response, False
    found = _object(response)
    text = "\n".join(
        _text(found.get(key)) for key in ("output", "aggregated_output", "stdout", "stderr")
    )
    code = found.get("exit_code")
    return text.strip(), isinstance(code, int) and code != 0


ADAPTERS: dict[str, Callable[[dict[str, Any], Path, tuple[Path, ...]], HookEvent]] = {
    "claude": _claude,
    "gemini": _gemini,
    "cursor": _cursor,
    "codex": _codex,
}
