"""The daemon's warm model, asked over its socket, for a second resident process of the same
user (the MCP server): one copy of the model serves both, and this process never loads its own
while the daemon answers. When no daemon answers (none runs, it runs other code or another
model, it is busy past the timeout), the model loads here, and this process keeps it."""

import array
import json
import logging
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from contextd.embeddings.local import LocalMiniLM
from contextd.ipc import client, rendezvous

__all__ = ["DaemonModel"]

log = logging.getLogger(__name__)

STARTUP_WAIT_S = 8.0  # a daemon loads the store, the model and the vectors before it listens
_POLL_S = 0.1
_MAX_TEXTS = 64  # the daemon's limit per request (contextd.daemon.protocol.MAX_EMBED_TEXTS)
_MAX_BATCH_BYTES = 2 * 1024 * 1024


class DaemonModel:
    """The same vectors as `own` (same id and width), computed by the daemon when it answers.

    `start` (None: never) starts a daemon when `warm` finds none, and `warm` waits a little
    for it rather than loading a second model."""

    def __init__(
        self,
        own: LocalMiniLM,
        home: Path,
        start: "Callable[[], subprocess.Popen[bytes]] | None" = None,
    ) -> None:
        self.id = own.id
        self.dimensions = own.dimensions
        self._own = own
        self._home = str(home)
        self._start = start
        self._stamp: str | None = None
        self._settled = threading.Event()  # set while no warm-up is waiting for a daemon
        self._settled.set()
        self._warned = False

    @property
    def borrowed(self) -> bool:
        """Whether the vectors still come from the daemon (no model is loaded here)."""
        return not self._own.loaded

    def warm(self) -> None:
        self._settled.clear()
        try:
            if self._ask(["warm up"], query=True) is not None or self._started_one():
                return
            self._own.warm_in_steps()  # a tool call may come while it loads
        finally:
            self._settled.set()

    def embed_query(self, text: str) -> list[float]:
        vectors = self._borrow([text], query=True)
        return vectors[0] if vectors is not None else self._own.embed_query(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for batch in _batches(texts):
            answered = self._borrow(batch, query=False)
            if answered is None:  # the rest here too: one model from now on
                return vectors + self._own.embed_documents(texts[len(vectors) :])
            vectors.extend(answered)
        return vectors

    def _borrow(self, texts: list[str], *, query: bool) -> list[list[float]] | None:
        self._settled.wait(STARTUP_WAIT_S)  # the daemon being started, not a second model
        if self._own.loaded:
            return None
        return self._ask(texts, query=query)

    def _started_one(self) -> bool:
        """Start a daemon and wait until it answers; False when none was started or it did
        not answer in time."""
        if self._start is None:
            return False
        try:
            process = self._start()
        except OSError:
            return False
        try:
            deadline = time.monotonic() + STARTUP_WAIT_S
            while time.monotonic() < deadline:
                if self._ask(["warm up"], query=True) is not None:
                    return True
                if process.poll() is not None:  # another daemon held the home, or it failed
                    return self._ask(["warm up"], query=True) is not None
                time.sleep(_POLL_S)
            return False
        finally:  # the daemon is this process's child: collect its exit whenever it comes
            threading.Thread(target=process.wait, name="contextd-daemon-exit", daemon=True).start()

    def _ask(self, texts: list[str], *, query: bool) -> list[list[float]] | None:
        if self._stamp is None:
            self._stamp = client.code_stamp()
        request = {
            "kind": "embed",
            "home": self._home,
            "stamp": self._stamp,
            "model": self.id,
            "query": query,
        }
        body = json.dumps(texts, ensure_ascii=False).encode("utf-8")
        try:
            reply = client.ask(self._home, request, body)
        except rendezvous.Unsafe as exc:
            if not self._warned:
                log.warning("%s Embedding in this process instead.", exc)
                self._warned = True
            return None
        if reply is None:
            return None
        return self._vectors(reply, len(texts))

    def _vectors(
        self, reply: tuple[dict[str, object], bytes], count: int
    ) -> list[list[float]] | None:
        head, body = reply
        width = self.dimensions
        if head.get("count") != count or head.get("dimensions") != width:
            return None
        values = array.array("f")
        if len(body) != count * width * values.itemsize:
            return None
        values.frombytes(body)
        flat = values.tolist()
        return [flat[row * width : (row + 1) * width] for row in range(count)]


def _batches(texts: list[str]) -> list[list[str]]:
    """`texts` in requests the daemon takes: at most _MAX_TEXTS, and about _MAX_BATCH_BYTES."""
    batches: list[list[str]] = []
    current: list[str] = []
    size = 0
    for text in texts:
        length = len(text) * 4  # a UTF-8 character is at most four bytes
        if current and (len(current) == _MAX_TEXTS or size + length > _MAX_BATCH_BYTES):
            batches.append(current)
            current, size = [], 0
        current.append(text)
        size += length
    if current:
        batches.append(current)
    return batches
