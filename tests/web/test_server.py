"""The served view as a process: it listens on loopback only, refuses a request without the
token, never writes the token anywhere but the line that announces it, and opens a browser
without putting the token on a command line. Its socket (and `contextd serve`'s) sends small
replies at once."""

import asyncio
import os
import signal
import socket
import stat
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from contextd.cli.main import cli
from contextd.web.server import bind
from tests.conftest import maps_library
from tests.web.served import running_ui

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads listening sockets in /proc")


def _listening(pid: int) -> list[str]:
    """The local addresses of every listening TCP socket the process holds."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table, encoding="ascii") as handle:
            for line in handle.readlines()[1:]:
                fields = line.split()
                if fields[3] != "0A" or fields[9] not in inodes:  # 0A: LISTEN
                    continue
                address, port = fields[1].split(":")
                raw = bytes.fromhex(address)
                if len(raw) == 4:
                    host = socket.inet_ntop(socket.AF_INET, raw[::-1])
                else:
                    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
                    host = socket.inet_ntop(socket.AF_INET6, words)
                found.append(f"{host}:{int(port, 16)}")
    return found


def _status(url: str, cookie: str | None = None) -> int:
    """The final status of a GET, following redirects with a cookie jar as a browser does."""
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    try:
        with opener.open(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def _other_addresses() -> list[str]:
    try:
        _, _, addresses = socket.gethostbyname_ex(socket.gethostname())
    except OSError:
        return []
    return [a for a in addresses if not a.startswith("127.")]


def test_each_connection_it_accepts_sends_small_writes_at_once() -> None:
    """Nagle's algorithm off on every accepted connection: else a reply written in two parts
    waits for the client's delayed ACK (40 ms a request on a kept-alive connection)."""
    nagle_off: list[int] = []

    async def accept_one() -> None:
        async def handle(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted = writer.get_extra_info("socket")
            nagle_off.append(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        listening = bind(0)
        server = await asyncio.start_server(handle, sock=listening)
        async with server:
            reader, writer = await asyncio.open_connection(*listening.getsockname()[:2])
            await reader.read()
            writer.close()

    asyncio.run(accept_one())
    assert len(nagle_off) == 1 and nagle_off[0] != 0


def test_it_listens_on_loopback_only_and_refuses_requests_without_the_token(repo: Path) -> None:
    with running_ui(repo) as served:
        port = int(served.base.rsplit(":", 1)[1])
        assert _listening(served.process.pid) == [f"127.0.0.1:{port}"]
        for address in _other_addresses():
            with pytest.raises(OSError):
                socket.create_connection((address, port), timeout=2).close()
        assert _status(served.base + "/") == 403
        assert _status(served.base + "/p/orbit/records") == 403
        cookie = f"contextd_ui_{port}={served.token}"
        assert _status(served.base + "/", cookie) == 200


def test_the_token_is_written_nowhere_but_the_announcement(repo: Path) -> None:
    with running_ui(repo) as served:
        cookie = f"contextd_ui_{served.base.rsplit(':', 1)[1]}={served.token}"
        assert _status(served.url) == 200  # the exchange, then the page
        assert _status(served.base + "/r/0000000000000", cookie) == 404
        assert _status(served.url.replace("token=", "token=x")) == 403
    first, rest = served.output[0], "".join(served.output[1:])
    assert served.token in first
    assert served.token not in rest
    assert served.process.returncode == 0


def test_open_hands_the_browser_a_private_file_not_the_token(
    repo: Path, tmp_path: Path, home: Path
) -> None:
    log = tmp_path / "browser-args"
    browser = tmp_path / "fake-browser"
    browser.write_text(f'#!/bin/sh\necho "$@" >> {log}\n', encoding="utf-8")
    browser.chmod(0o700)
    env = os.environ | {"BROWSER": str(browser)}
    with running_ui(repo, "--open", env=env) as served:
        port = served.base.rsplit(":", 1)[1]
        launcher = home / f"ui-{port}.html"
        deadline = time.monotonic() + 20
        while not log.exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # the browser is started in the background
        given = log.read_text(encoding="utf-8").strip()
        assert given == launcher.as_uri()
        assert served.token not in given
        assert stat.S_IMODE(launcher.stat().st_mode) == 0o600
        assert served.url in launcher.read_text(encoding="utf-8")
    assert not launcher.exists()  # removed when the server stops


def test_sigterm_stops_it_cleanly_and_removes_the_launcher(
    repo: Path, tmp_path: Path, home: Path
) -> None:
    log = tmp_path / "browser-args"
    browser = tmp_path / "fake-browser"
    browser.write_text(f'#!/bin/sh\necho "$@" >> {log}\n', encoding="utf-8")
    browser.chmod(0o700)
    env = os.environ | {"BROWSER": str(browser)}
    with running_ui(repo, "--open", env=env, stop=signal.SIGTERM) as served:
        launcher = home / f"ui-{served.base.rsplit(':', 1)[1]}.html"
        deadline = time.monotonic() + 20
        while not log.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert launcher.exists()
    assert not launcher.exists()
    assert served.process.returncode == 0
    assert "Stopped." in served.output[-1]


def test_ctrl_c_while_the_browser_starts_still_removes_the_launcher(
    repo: Path, tmp_path: Path, home: Path
) -> None:
    log = tmp_path / "browser-args"
    browser = tmp_path / "fake-browser"  # a browser that takes its time to return
    browser.write_text(
        f'#!/bin/sh\necho "$@" >> {log}\nexec sleep 5 </dev/null >/dev/null 2>&1\n',
        encoding="utf-8",
    )
    browser.chmod(0o700)
    with running_ui(repo, "--open", env=os.environ | {"BROWSER": str(browser)}) as served:
        launcher = home / f"ui-{served.base.rsplit(':', 1)[1]}.html"
        deadline = time.monotonic() + 20
        while not log.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert launcher.exists()
    assert not launcher.exists()


def test_a_port_in_use_is_one_sentence(repo: Path) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = taken.getsockname()[1]
        result = CliRunner().invoke(cli, ["ui", "--port", str(port)])
    finally:
        taken.close()
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: Port {port} is already in use; pick another with --port, or leave it out for "
        "a free one.\n"
    )


def test_write_on_a_store_that_cannot_be_written_is_refused(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A read-only home (as a mount) cannot be made here for root, who writes through modes.
    monkeypatch.setattr("contextd.cli.ui.can_write_store", lambda settings: False)
    result = CliRunner().invoke(cli, ["ui", "--write"])
    assert result.exit_code == 6
    assert "cannot be written; run `contextd ui` without --write" in result.stderr


@pytest.mark.usefixtures("local_model")
def test_it_loads_the_models_fast_runtime_before_any_request(repo: Path) -> None:
    with running_ui(repo) as served:
        assert maps_library(served.process.pid, "libonnxruntime")
