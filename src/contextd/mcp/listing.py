"""The tool list as a client receives it. Every agent session reads the input schemas into
its context, so they say each thing once: pydantic's titles restate the names, and an
optional argument is simply one that may be left out."""

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["compact_schema", "compact_tool_list", "described"]

NULL = {"type": "null"}
VALUES = ("default", "enum", "const", "examples", "required")  # data, not schemas


def described(tool: Callable[..., Any]) -> str:
    """A tool's description: its docstring's paragraphs, each on one line (not the source's
    line breaks and indentation)."""
    paragraphs = inspect.cleandoc(tool.__doc__ or "").split("\n\n")
    return "\n\n".join(" ".join(paragraph.split()) for paragraph in paragraphs)


def compact_schema(schema: Any, *, arguments: bool) -> Any:
    """`schema` without titles; with `arguments`, an `X or null` defaulting to null is `X`.

    Nullable results keep their null: a result may carry one. An argument's null only
    restates that it is optional, and the server still takes an explicit null.
    """
    if isinstance(schema, list):
        return [compact_schema(item, arguments=arguments) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("properties", "$defs"):
            out[key] = {n: compact_schema(s, arguments=arguments) for n, s in value.items()}
        elif key in VALUES:
            out[key] = value
        elif not (key == "title" and isinstance(value, str)):
            out[key] = compact_schema(value, arguments=arguments)
    if arguments and out.get("default", ...) is None:
        variants = out.get("anyOf")
        if isinstance(variants, list) and len(variants) == 2 and NULL in variants:
            (kept,) = (variant for variant in variants if variant != NULL)
            del out["anyOf"], out["default"]
            out = {**kept, **out}
    return out


async def compact_tool_list(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
    """Middleware: `tools/list` answers with compact schemas."""
    result = await call_next(ctx)
    if ctx.method != "tools/list" or not isinstance(result, dict):
        return result
    tools = []
    for tool in result.get("tools", []):
        tool = dict(tool)
        if "inputSchema" in tool:
            # Other arguments are refused (contextd.mcp.arguments): say so in the schema.
            schema = compact_schema(tool["inputSchema"], arguments=True)
            tool["inputSchema"] = {**schema, "additionalProperties": False}
        if "outputSchema" in tool:
            tool["outputSchema"] = compact_schema(tool["outputSchema"], arguments=False)
        tools.append(tool)
    return {**result, "tools": tools}
