"""Stand-ins for the Anthropic Messages API and the Gemini API on loopback, so Claude Code and
Gemini CLI run a real turn offline and with no account:
`python -m tests.integration.stand_in_api anthropic|gemini LOG -- COMMAND...` serves on
127.0.0.1, runs COMMAND with the agent's base-URL variable pointing at it, appends each request
it receives to LOG (JSON lines) and exits with COMMAND's code. Every turn answers one line."""

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANSWER = "Noted, from the stand-in model."


class _Handler(BaseHTTPRequestHandler):
    log_path = ""
    lock = threading.Lock()

    def log_message(self, *_args: Any) -> None:
        pass  # stderr is the command's

    def _record(self, body: str) -> None:
        with self.lock, open(self.log_path, "a", encoding="utf-8") as log:
            log.write(json.dumps({"method": self.command, "path": self.path, "body": body}) + "\n")

    def do_GET(self) -> None:
        self._record("")
        self.send_response(404)
        self.end_headers()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0)).decode("utf-8")
        self._record(body)
        if "count_tokens" in self.path:
            self._json({"input_tokens": 10})
            return
        request = json.loads(body or "{}")
        message = {
            "id": "msg_stand_in",
            "type": "message",
            "role": "assistant",
            "model": request.get("model", "claude"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        call = self._tool_call(request)
        if call is not None:
            self._call_tool(message, call, bool(request.get("stream")))
            return
        if not request.get("stream"):
            text = [{"type": "text", "text": ANSWER}]
            self._json(message | {"content": text, "stop_reason": "end_turn"})
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for kind, data in (
            ("message_start", {"message": message}),
            ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": ANSWER}}),
            ("content_block_stop", {"index": 0}),
            (
                "message_delta",
                {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}},
            ),
            ("message_stop", {}),
        ):
            event = json.dumps({"type": kind} | data)
            self.wfile.write(f"event: {kind}\ndata: {event}\n\n".encode())
            self.wfile.flush()

    def _tool_call(self, request: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """The flavour "anthropic-tool": a turn offered TOOL that has no tool result yet is
        answered by calling it (with TOOL_INPUT); every other request gets the one line."""
        wanted = os.environ.get("STAND_IN_TOOL")
        offered = {t.get("name") for t in request.get("tools") or [] if isinstance(t, dict)}
        if not wanted or wanted not in offered or "tool_result" in json.dumps(request):
            return None
        return wanted, json.loads(os.environ.get("STAND_IN_TOOL_INPUT") or "{}")

    def _call_tool(
        self, message: dict[str, Any], call: tuple[str, dict[str, Any]], stream: bool
    ) -> None:
        name, arguments = call
        block = {"type": "tool_use", "id": "toolu_stand_in", "name": name, "input": arguments}
        if not stream:
            self._json(message | {"content": [block], "stop_reason": "tool_use"})
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        started = block | {"input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(arguments)}
        for kind, data in (
            ("message_start", {"message": message}),
            ("content_block_start", {"index": 0, "content_block": started}),
            ("content_block_delta", {"index": 0, "delta": delta}),
            ("content_block_stop", {"index": 0}),
            (
                "message_delta",
                {"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}},
            ),
            ("message_stop", {}),
        ):
            event = json.dumps({"type": kind} | data)
            self.wfile.write(f"event: {kind}\ndata: {event}\n\n".encode())
            self.wfile.flush()

    def _json(self, data: dict[str, Any]) -> None:
        raw = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


class _CaptureHandler(_Handler):
    """A scripted session for the Stop hook's request: the prompt makes the model write a
    file (a change to the work tree); once that is done it ends the turn; when a request
    carries the Stop hook's request to record, it loads record_decision (ToolSearch) and
    calls it, then ends the turn again. Requests without the agent's tools (Claude Code's
    side calls) get the one-line answer."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0)).decode("utf-8")
        self._record(body)
        if "count_tokens" in self.path:
            self._json({"input_tokens": 10})
            return
        request = json.loads(body or "{}")
        tools = {t.get("name") for t in request.get("tools") or [] if isinstance(t, dict)}
        results = _tool_results(request)
        step: dict[str, Any] = {"type": "text", "text": ANSWER}
        if "Write" not in tools:
            pass  # a side call (a title, a summary): the one-line answer
        elif "Record nothing trivial" in body:  # the Stop hook's request reached the model
            searches = [k for k in results if k.startswith("search")]
            found = RECORD_TOOL in tools or any(
                RECORD_TOOL in results[k] and "No matching" not in results[k] for k in searches
            )
            if found and "record" not in results:
                step = _tool_use("record", RECORD_TOOL, CAPTURED)
            elif not found and len(searches) < 30:
                # Claude Code defers MCP tools behind ToolSearch, and says so while the
                # server still connects: ask again, a moment later.
                if searches:
                    time.sleep(1.0)
                query = {"query": f"select:{RECORD_TOOL}"}
                step = _tool_use(f"search{len(searches)}", "ToolSearch", query)
        elif "write" not in results:
            path = os.path.join(os.getcwd(), "worker.py")
            step = _tool_use("write", "Write", {"file_path": path, "content": "RETRIES = 8\n"})
        self._message(request, step)

    def _message(self, request: dict[str, Any], step: dict[str, Any]) -> None:
        stop = "tool_use" if step["type"] == "tool_use" else "end_turn"
        message = {
            "id": "msg_stand_in",
            "type": "message",
            "role": "assistant",
            "model": request.get("model", "claude"),
            "content": [step],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        if not request.get("stream"):
            self._json(message)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        if step["type"] == "tool_use":
            start = step | {"input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(step["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": step["text"]}
        events = (
            ("message_start", {"message": message | {"content": [], "stop_reason": None}}),
            ("content_block_start", {"index": 0, "content_block": start}),
            ("content_block_delta", {"index": 0, "delta": delta}),
            ("content_block_stop", {"index": 0}),
            ("message_delta", {"delta": {"stop_reason": stop}, "usage": {"output_tokens": 5}}),
            ("message_stop", {}),
        )
        for kind, data in events:
            event = json.dumps({"type": kind} | data)
            self.wfile.write(f"event: {kind}\ndata: {event}\n\n".encode())
            self.wfile.flush()


RECORD_TOOL = "mcp__contextd__record_decision"
CAPTURED = {
    "summary": "Retry failed jobs at most 8 times before dead-lettering them",
    "problem": "Jobs retried forever and hid outages from the on-call person.",
    "why_chosen": "Eight attempts cover a five-minute blip; after that a person must look.",
}


def _tool_use(key: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_stand_in_{key}", "name": name, "input": arguments}


def _tool_results(request: dict[str, Any]) -> dict[str, str]:
    """The scripted tool calls ("write", "search0", "record") the request answers, with the
    text of each answer."""
    found: dict[str, str] = {}
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                key = str(block.get("tool_use_id", "")).removeprefix("toolu_stand_in_")
                found[key] = json.dumps(block.get("content"))
    return found


class _GeminiHandler(_Handler):
    """generateContent answers JSON; streamGenerateContent (?alt=sse) one server-sent event."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0)).decode("utf-8")
        self._record(body)
        if "countTokens" in self.path:
            self._json({"totalTokens": 10})
            return
        answer = {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"text": ANSWER}]},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5},
        }
        if "alt=sse" not in self.path:
            self._json(answer)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        self.wfile.write(f"data: {json.dumps(answer)}\r\n\r\n".encode())
        self.wfile.flush()


_FLAVOURS: dict[str, tuple[type[_Handler], dict[str, str]]] = {
    "anthropic": (_Handler, {"ANTHROPIC_BASE_URL": "{url}"}),
    "anthropic-capture": (_CaptureHandler, {"ANTHROPIC_BASE_URL": "{url}"}),
    "gemini": (_GeminiHandler, {"GOOGLE_GEMINI_BASE_URL": "{url}"}),
}


def main(argv: list[str]) -> int:
    flavour, log_path, separator, *command = argv
    assert separator == "--" and command, "usage: stand_in_api FLAVOUR LOG -- COMMAND..."
    handler, variables = _FLAVOURS[flavour]
    handler.log_path = log_path
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    env = os.environ | {name: value.format(url=url) for name, value in variables.items()}
    try:
        return subprocess.run(command, env=env, timeout=180, check=False).returncode
    finally:
        server.shutdown()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
