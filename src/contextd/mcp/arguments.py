"""Tool arguments checked against the tool's schema before it runs: an argument the tool does
not have is an error naming it and the ones the tool takes, never silently dropped (a
`private: true` the tool has no such argument for would otherwise store a team record)."""

from typing import Any

from mcp.server import MCPServer
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.types import CallToolResult, TextContent

__all__ = ["refuse_unknown_arguments"]


def refuse_unknown_arguments(server: MCPServer[Any]) -> ServerMiddleware[Any]:
    """Middleware for `server`: a `tools/call` with an argument its tool lacks fails as a tool
    error result, before the tool runs."""
    known: dict[str, tuple[str, ...]] = {}

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params if isinstance(ctx.params, dict) else {}
        arguments = params.get("arguments")
        if ctx.method != "tools/call" or not isinstance(arguments, dict):
            return await call_next(ctx)
        if not known:
            known.update(
                (tool.name, tuple((tool.input_schema or {}).get("properties", {})))
                for tool in await server.list_tools()
            )
        name = str(params.get("name", ""))
        taken = known.get(name)
        unknown = sorted(set(arguments) - set(taken)) if taken is not None else []
        if not unknown:
            return await call_next(ctx)
        listed = ", ".join(taken or ()) or "none"
        sentence = (
            f"{name} has no argument {_names(unknown)}; nothing was done. Its arguments are: "
            f"{listed}."
        )
        return CallToolResult(content=[TextContent(type="text", text=sentence)], is_error=True)

    return middleware


def _names(unknown: list[str]) -> str:
    shown = [repr(n[:40]) for n in unknown[:5]]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
