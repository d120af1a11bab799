"""A write whose COMMIT reached the server and whose answer never came back (the connection
broke in between) is not reported as a failure: it may have been stored, and the message says
so and how to look. A real TCP relay stands between contextd and the real server, and cuts
the connection once the server has answered the COMMIT of the first write of a record."""

import contextlib
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from contextd.errors import StoreError, UnknownOutcomeError
from contextd.storage.postgres.database import PostgresDatabase
from tests.conftest import Cli, make_repo, use_server

COMMIT = b"Q\x00\x00\x00\x0bCOMMIT\x00"  # the simple-query message psycopg commits with
RECORD_WRITE = b"INSERT INTO records("


class Relay:
    """Forwards loopback connections to the server; armed, it lets the first COMMIT of a
    connection that wrote a record through, waits for the server's answer and, instead of
    passing it on, closes the connection."""

    def __init__(self, server_port: int) -> None:
        self.server_port = server_port
        self.armed = threading.Event()
        self.cut = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.server_port))
            committing = threading.Event()
            threading.Thread(
                target=self._upstream, args=(client, server, committing), daemon=True
            ).start()
            threading.Thread(
                target=self._downstream, args=(server, client, committing), daemon=True
            ).start()

    def _upstream(
        self, client: socket.socket, server: socket.socket, committing: threading.Event
    ) -> None:
        wrote = False
        while data := _read(client):
            wrote = wrote or RECORD_WRITE in data
            if self.armed.is_set() and COMMIT in data and wrote:
                self.armed.clear()
                committing.set()
            server.sendall(data)
        _close(server)

    def _downstream(
        self, server: socket.socket, client: socket.socket, committing: threading.Event
    ) -> None:
        while data := _read(server):
            if committing.is_set():  # the server has answered the COMMIT: drop the answer
                self.cut.set()
                _close(client)
                _close(server)
                return
            client.sendall(data)
        _close(client)

    def close(self) -> None:
        self.listener.close()


def _read(conn: socket.socket) -> bytes:
    try:
        return conn.recv(65536)
    except OSError:
        return b""


def _close(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        conn.shutdown(socket.SHUT_RDWR)
    conn.close()


@pytest.fixture
def relay(pg_url: str) -> Iterator[Relay]:
    PostgresDatabase.open_url(pg_url).close()  # migrated directly, not through the relay
    port = int(pg_url.rsplit(":", 1)[1].split("/", 1)[0])
    opened = Relay(port)
    yield opened
    opened.close()


def _through(relay: Relay, pg_url: str) -> str:
    return pg_url.replace(f":{relay.server_port}/", f":{relay.port}/")


def test_a_write_whose_commit_got_no_answer_says_it_may_be_stored(
    relay: Relay, pg_url: str, home: Path, tmp_path: Path, run: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_server(home, _through(relay, pg_url))
    monkeypatch.chdir(make_repo(tmp_path / "orbit"))
    assert run("attach").exit_code == 0
    relay.armed.set()
    title = "The billing worker retries a payment three times before it pages anyone"
    result = run("add", title, "--category", "gotcha")
    assert relay.cut.is_set()
    assert result.exit_code == UnknownOutcomeError.exit_code
    with psycopg.connect(pg_url) as conn:
        stored = conn.execute("SELECT id FROM records WHERE title = %s", (title,)).fetchall()
    assert len(stored) == 1  # the server did commit it
    message = " ".join(result.output.split())
    assert (
        f"broke as {stored[0][0]} was being committed: it may or may not have been stored"
        in message
    )
    assert f"see `contextd show {stored[0][0]}`" in message
    assert "writes are refused" not in message
    assert run("show", stored[0][0]).exit_code == 0  # and the next command finds it


def test_a_failure_before_the_commit_is_still_a_plain_failure(relay: Relay, pg_url: str) -> None:
    db = PostgresDatabase.open_url(_through(relay, pg_url))
    try:
        with pytest.raises(StoreError) as failed, db.transaction() as conn:
            conn.execute("SELECT no_such_column FROM records")
        assert not isinstance(failed.value, UnknownOutcomeError)
    finally:
        db.close()
