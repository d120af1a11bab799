"""A stand-in OpenAI-compatible chat endpoint on loopback, scripted per request: what it
answers (a chat completion holding given content, raw bytes, or nothing for as long as it is
held) and what it was asked. The capture tests and benchmarks/capture_quality.py use it."""

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ChatStandIn", "chat_stand_in", "completion"]

Answer = Callable[[dict[str, Any]], bytes]


def completion(content: str | dict[str, Any]) -> bytes:
    """An OpenAI-style chat completion whose message is `content` (a dict: as JSON)."""
    text = content if isinstance(content, str) else json.dumps(content)
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()


class ChatStandIn:
    """`answer` turns each request into the body sent back; `hold` keeps every answer back
    until released (an endpoint that hangs)."""

    def __init__(self) -> None:
        self.answer: Answer = lambda _request: completion({"records": []})
        self.asked: list[dict[str, Any]] = []
        self.arrived = threading.Event()  # a request came in
        self.released = threading.Event()
        self.released.set()
        self.answered = 0
        self.api_base = ""

    def hold(self) -> None:
        self.released.clear()

    def release(self) -> None:
        self.released.set()

    def user_text(self, index: int = -1) -> str:
        """What the `index`th request put in the user's message."""
        messages = self.asked[index]["messages"]
        return str(next(m["content"] for m in messages if m["role"] == "user"))

    def system_text(self, index: int = -1) -> str:
        messages = self.asked[index]["messages"]
        return str(next(m["content"] for m in messages if m["role"] == "system"))


def _handler(stand_in: ChatStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            length = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(length))
            if self.path != "/v1/chat/completions":
                self.send_error(404)
                return
            stand_in.asked.append(request)
            stand_in.arrived.set()
            stand_in.released.wait(120)
            body = stand_in.answer(request)
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                stand_in.answered += 1
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def chat_stand_in() -> Iterator[ChatStandIn]:
    stand_in = ChatStandIn()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(stand_in))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    stand_in.api_base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield stand_in
    finally:
        stand_in.release()
        server.shutdown()
        server.server_close()
