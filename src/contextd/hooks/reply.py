"""Reading an agent's hook payload and writing the agent's reply (both need json, which the
hook's start-up path leaves to whoever does the work: the daemon or the in-process path)."""

import json

from contextd.limits import MAX_HOOK_PAYLOAD

__all__ = ["agent_reply", "is_command", "parse_payload"]

# Our event names and the Claude Code hook each answers, for agents that do not name theirs.
_AGENT_EVENT = {
    "session-start": "SessionStart",
    "prompt": "UserPromptSubmit",
    "post-edit": "PostToolUse",
    "post-bash": "PostToolUse",
    "stop": "Stop",
}


def parse_payload(raw: bytes) -> dict[str, object]:
    """The hook's JSON object ({} for an empty stdin)."""
    if len(raw) > MAX_HOOK_PAYLOAD:
        raise ValueError("the hook payload is larger than 4 MB")
    if not raw.strip():
        return {}
    try:
        payload = json.loads(raw)
    except RecursionError:
        raise ValueError("the hook payload nests too deeply") from None
    if not isinstance(payload, dict):
        raise ValueError("the hook payload is not a JSON object")
    return payload


def is_command(prompt: str) -> bool:
    """An empty prompt, or a slash or bang command: nothing to recall memory for."""
    return not prompt or prompt[0] in "/!"


def agent_reply(event: str, text: str, payload: dict[str, object]) -> str:
    """What the hook prints: the agent's JSON hook output, ASCII only whatever the records
    hold; "" when there is nothing to say.

    Claude Code and Gemini CLI read `hookSpecificOutput.additionalContext` under the event
    name they sent; Cursor (camelCase events) reads `additional_context`. At the end of a
    turn, Claude Code and Codex go on with a blocking decision's `reason` as their next
    instruction, Gemini CLI's AfterAgent with a denial's. What pre-compact and session-end
    say is for the person, not the model: Claude Code's PreCompact (and Codex's) and Gemini's
    PreCompress take no context, and a session's end has no model left; both show a
    `systemMessage` to the user.
    """
    if not text:
        return ""
    sent = payload.get("hook_event_name")
    if event == "stop":
        decision = "deny" if sent == "AfterAgent" else "block"
        reply: dict[str, object] = {"decision": decision, "reason": text}
    elif event in ("pre-compact", "session-end"):
        reply = {"systemMessage": text}
    elif sent == "sessionStart":
        reply = {"additional_context": text}
    else:
        agent_event = sent if isinstance(sent, str) and sent else _AGENT_EVENT.get(event)
        if agent_event is None:
            return ""
        reply = {"hookSpecificOutput": {"hookEventName": agent_event, "additionalContext": text}}
    return json.dumps(reply, ensure_ascii=True) + "\n"
