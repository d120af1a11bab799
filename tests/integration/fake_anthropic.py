"""A stand-in for the Anthropic Messages API on loopback, so Claude Code runs a real turn
offline and with no account: `python -m tests.integration.fake_anthropic LOG -- COMMAND...`
serves on 127.0.0.1, runs COMMAND with ANTHROPIC_BASE_URL pointing at it, appends each request
it receives to LOG (JSON lines) and exits with COMMAND's code. Every turn answers one line."""

import json
import os
import subprocess
import sys
import threading
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

    def _json(self, data: dict[str, Any]) -> None:
        raw = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


def main(argv: list[str]) -> int:
    log_path, separator, *command = argv
    assert separator == "--" and command, "usage: fake_anthropic LOG -- COMMAND..."
    _Handler.log_path = log_path
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = os.environ | {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.server_port}"}
    try:
        return subprocess.run(command, env=env, timeout=180, check=False).returncode
    finally:
        server.shutdown()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
