"""`contextd serve` as a real subprocess on a loopback port, and the SDK's Streamable HTTP
client speaking to it with a bearer token."""

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, Implementation

from mcp import Client

__all__ = ["Served", "cli_json", "connect", "new_token", "result_data", "serve", "text_of"]


class Served:
    """A running `contextd serve`: its URL and process."""

    def __init__(self, process: subprocess.Popen[str], url: str) -> None:
        self.process = process
        self.url = url
        self.log = ""  # what it wrote on stderr, once it has ended

    def kill(self) -> None:
        """SIGKILL: nothing is flushed or closed in an orderly way."""
        if self.process.poll() is None:
            self.process.kill()
        self._ended()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        self._ended()

    def _ended(self) -> None:
        try:
            _, self.log = self.process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, self.log = self.process.communicate(timeout=10)


def start(cwd: Path, *extra: str, env: dict[str, str] | None = None) -> Served:
    """Start `contextd serve --port 0 --json` in `cwd` and wait for the address it prints."""
    process = subprocess.Popen(
        [sys.executable, "-m", "contextd", "serve", "--port", "0", "--json", *extra],
        cwd=cwd,
        env=env or dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line:
        _, err = process.communicate(timeout=30)
        raise AssertionError(f"contextd serve did not start: {err}")
    # Its stderr is read once it ends; a server that logs much meanwhile would block on a full
    # pipe, and this one logs nothing but warnings.
    return Served(process, json.loads(line)["url"])


@contextmanager
def serve(cwd: Path, *extra: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    served = start(cwd, *extra, env=env)
    try:
        yield served
    finally:
        served.stop()


def cli_json(home: Path, *args: str, cwd: Path | None = None) -> Any:
    """`contextd --home HOME ARGS --json`, the real CLI in a process of its own, as parsed."""
    done = subprocess.run(
        [sys.executable, "-m", "contextd", "--home", str(home), *args, "--json"],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    return json.loads(done.stdout)


def new_token(home: Path, name: str, *extra: str) -> str:
    """A token made by the real CLI, as an administrator would."""
    token = cli_json(home, "token", "create", name, *extra)["token"]
    assert isinstance(token, str)
    return token


@asynccontextmanager
async def connect(url: str, token: str | None, name: str | None = None) -> AsyncIterator[Client]:
    """The SDK's client over Streamable HTTP; `name`: the clientInfo it introduces itself by."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    info = {} if name is None else {"client_info": Implementation(name=name, version="1.0")}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), **info) as client,
    ):
        yield client


def text_of(result: CallToolResult) -> str:
    return "\n".join(getattr(part, "text", "") for part in result.content)


def result_data(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert isinstance(data, dict)
    return data


def run(body: Any, *args: Any) -> Any:
    async def main() -> Any:
        with anyio.fail_after(120):
            return await body(*args)

    return anyio.run(main)
