"""Errors in MCP's own words: the core's facts, then what to do next as tools and parameters
an agent can call; and argument errors from the SDK's schema check as one sentence."""

import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from contextd.errors import ContextdError, ValidationError

if TYPE_CHECKING:
    from contextd.core.upkeep.quality import QualityIssue

__all__ = ["in_mcp_words", "plain_argument_errors", "quality_fix"]

# What a field is called where a tool takes it under another name.
PARAMETERS = {"title": "summary (text, rule or name)"}
ACTIONS = {
    "update": "change it with update_entry (id {id})",
    "verify": "confirm it with verify_entry (id {id})",
    "supersede": "replace it with supersede",
    "force": "call again with force=true to store it anyway",
    "show": "read it with get_entry (id {id})",
    "record_why": "if it is true again, record why with record_decision",
    "unarchive": "ask the user to run `contextd unarchive {id}`",
    "list": "search or get_project_summary lists the records",
    "attach": "ask the user to run `contextd attach` in the project's folder",
    "name_project": "pass the project parameter (a project name or one of its folders)",
    "make_global": "set is_global=true",
}


def in_mcp_words(error: ContextdError) -> str:
    """The error's sentence, naming the parameters to fix and the tools to call."""
    message = str(error)
    if isinstance(error, ValidationError):
        fields = dict.fromkeys(PARAMETERS.get(field, field) for field, _ in error.problems)
        message = f"{message} (fix: {', '.join(fields)})"
    return error.worded(ACTIONS, message)


def quality_fix(issue: "QualityIssue") -> str:
    """The tool call that mends a quality issue."""
    rid = issue.record.id
    if issue.kind == "duplicate":
        return f"append what it adds to {issue.other}, then delete {rid}"
    if issue.kind == "thin_rationale":
        return (
            f'update_entry (id {rid}, fields {{"{issue.field}": "..."}}) to say at least '
            f"{issue.minimum} characters, or append to that field"
        )
    if issue.kind == "missing_tags":
        return f"update_entry (id {rid}, tags [...])"
    if issue.kind == "isolated":
        return f"link (id {rid}, to {issue.other})"
    return f"verify_entry (id {rid}) if it still holds, else archive it"


# "problem\n  Field required [type=missing, ...]\n    For further information visit ..."
_PROBLEM = re.compile(r"^(\S[^\n]*)\n  ([^\n\[]+?)\s*\[type=", re.MULTILINE)


async def plain_argument_errors(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
    """The SDK reports arguments that fail a tool's schema as a pydantic dump with links:
    say it in one sentence naming each argument and what is wrong with it."""
    result = await call_next(ctx)
    if ctx.method != "tools/call" or not isinstance(result, dict) or not result.get("isError"):
        return result
    content = result.get("content") or [{}]
    text = str(content[0].get("text", "")) if isinstance(content[0], dict) else ""
    if "validation error" not in text or "errors.pydantic.dev" not in text:
        return result
    params = ctx.params if isinstance(ctx.params, dict) else {}
    tool = str(params.get("name", "the tool"))
    found = [f"{name} {what.strip().lower()}" for name, what in _PROBLEM.findall(text)]
    sentence = f"The arguments of {tool} need fixing: {'; '.join(found) or 'see its schema'}."
    return {**result, "content": [{"type": "text", "text": sentence}]}
