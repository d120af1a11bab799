"""The stdio transport, with two repairs: a message holding a lone UTF-16 surrogate escape
(`"\\ud800"`) is still read, so its request gets an answer; and a line that is no message at
all is answered with JSON-RPC's own error, where the SDK drops it silently.

The SDK's JSON parser refuses such a line outright, and a request it cannot read is one it
cannot answer: the client would wait forever. Here the line is read by Python's parser
instead, each lone surrogate becomes U+FFFD (as bytes that are not UTF-8 already do on this
transport), and the tools refuse an argument holding U+FFFD with an error result. A line that
is not JSON gets a parse error (-32700), JSON that is not a JSON-RPC message an invalid
request (-32600), both with the id null unless the message names a usable one; the server
carries on with the next line.
"""

import contextlib
import json
from io import TextIOWrapper
from types import TracebackType
from typing import Any, BinaryIO, Self

import anyio
import mcp_types as types
from mcp.server import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

__all__ = ["REPLACEMENT", "run_stdio"]

REPLACEMENT = "\ufffd"


def run_stdio(server: MCPServer, streams: tuple[BinaryIO, BinaryIO] | None = None) -> None:
    """Serve `server` on stdin/stdout (or on the `streams` given, read and written as the
    SDK reads and writes stdio: UTF-8, undecodable bytes replaced) until the client
    disconnects."""

    async def main() -> None:
        given: tuple[Any, Any] = (None, None)
        if streams is not None:
            reading = TextIOWrapper(streams[0], encoding="utf-8", errors="replace")
            writing = TextIOWrapper(streams[1], encoding="utf-8")
            given = (anyio.wrap_file(reading), anyio.wrap_file(writing))
        async with stdio_server(*given) as (read_stream, write_stream):
            lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async does the same
            await lowlevel.run(
                _RepairedReads(read_stream, write_stream),
                write_stream,
                lowlevel.create_initialization_options(),
            )

    anyio.run(main)


class _RepairedReads:
    """The transport's read stream, with unreadable lines read again (see the module)."""

    def __init__(self, inner: Any, replies: Any) -> None:
        self._inner = inner
        self._replies = replies  # where the refusal of a line that is no message goes

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        item = _repaired(await self._inner.receive())
        refusal = _refusal(item) if isinstance(item, Exception) else None
        if refusal is not None:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self._replies.send(SessionMessage(refusal))
        return item  # the SDK logs it and reads on

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


def _repaired(item: SessionMessage | Exception) -> SessionMessage | Exception:
    if not isinstance(item, Exception):
        return item
    line = _input_of(item)
    if line is None:
        return item
    try:
        document = json.loads(line)
        text = json.dumps(_without_surrogates(document))
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(text, by_name=False))
    except Exception:  # not that repair's case: the transport's own error stands
        return item


def _input_of(error: Exception) -> str | None:
    """The raw line a parse error was raised for, when it holds an escape."""
    found = _problems(error)
    line = found[0].get("input") if found else None
    return line if isinstance(line, str) and "\\u" in line.lower() else None


def _problems(error: Exception) -> list[dict[str, Any]]:
    """What pydantic found wrong with a line (it keeps the input with each problem)."""
    errors = getattr(error, "errors", None)
    if not callable(errors):
        return []
    try:
        found = errors()
    except Exception:
        return []
    return [p for p in found if isinstance(p, dict)] if isinstance(found, list) else []


def _refusal(error: Exception) -> types.JSONRPCError | None:
    """JSON-RPC's answer to a line that is no message; None for a blank line or a failure
    of another kind (which has no line to answer)."""
    found = _problems(error)
    if not found:
        return None
    if found[0].get("type") == "json_invalid":
        line = found[0].get("input")
        if not isinstance(line, str) or not line.strip():
            return None
        try:
            document = json.loads(line)
        except (ValueError, RecursionError):
            return _error(None, types.PARSE_ERROR, "Parse error: the line is not JSON")
    else:
        document = next((p["input"] for p in found if isinstance(p.get("input"), dict)), None)
    ident = document.get("id") if isinstance(document, dict) else None
    if isinstance(ident, bool) or not isinstance(ident, str | int):
        ident = None
    return _error(
        ident,
        types.INVALID_REQUEST,
        "Invalid Request: not a JSON-RPC 2.0 message (jsonrpc, id and method, or a result)",
    )


def _error(ident: str | int | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=ident, error=types.ErrorData(code=code, message=message)
    )


def _without_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return "".join(REPLACEMENT if "\ud800" <= c <= "\udfff" else c for c in value)
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    return value
