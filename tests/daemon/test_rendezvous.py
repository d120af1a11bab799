"""Where the daemon listens and what its clients check before they talk to it: real daemons,
real sockets, real files, and a listener standing in for an impostor."""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from contextd.wire import frames, rendezvous, to_daemon
from tests.conftest import DECISION, POSTGRES, Cli, make_repo
from tests.daemon._support import Daemons, wait_gone
from tests.hooks._support import hook_env, run_hook, user_prompt

CANARY = "canary-7c0ffee-not-for-the-daemon"


def _private(path: Path) -> Path:
    path.mkdir(mode=0o700, parents=True)
    return path


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A private runtime folder with a short path, as /run/user/UID is: a socket's path has a
    length limit (108 bytes), which a test's temporary folder may pass."""
    folder = Path(tempfile.mkdtemp(prefix="run-user-"))  # mode 0700
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_with_a_private_runtime_dir_the_socket_lives_there(
    daemons: Daemons, repo: Path, run: Cli, home: Path, runtime: Path
) -> None:
    env = hook_env(XDG_RUNTIME_DIR=str(runtime))
    decision = run.json(*DECISION)["id"]
    started = daemons.start(env=env)
    socket_path = Path(started["socket"])
    assert socket_path.parent == runtime / "contextd" and socket_path.is_socket()
    assert (runtime / "contextd").stat().st_mode & 0o777 == 0o700
    assert socket_path.stat().st_mode & 0o777 == 0o600
    assert not (home / "daemon.sock").exists()
    # A client finds it through the home's record, whatever its own environment says.
    prompt = user_prompt(repo, DECISION[3] + ": what did we do about it?")
    assert decision in run_hook("prompt", prompt, cwd=repo).context
    assert to_daemon.ask(str(home), {"kind": "ping"}) is not None
    daemons.contextd("daemon", "stop")
    assert not socket_path.exists() and not (home / "daemon.socket").exists()


def test_a_runtime_dir_open_to_others_is_not_used(
    daemons: Daemons, repo: Path, home: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    started = daemons.start(env=hook_env(XDG_RUNTIME_DIR=str(shared)))
    assert started["socket"] == str(home / "daemon.sock")
    assert not (shared / "contextd").exists()


def test_a_home_too_long_for_a_socket_gets_an_unguessable_private_folder(
    repo: Path, run: Cli, tmp_path: Path
) -> None:
    home = _private(tmp_path / ("h" * 60) / ("o" * 60))
    (home / "config.toml").write_text('[embeddings]\nprovider = "hashing"\n', encoding="utf-8")
    env = hook_env(CONTEXTD_HOME=str(home))
    control = Daemons(home, repo)
    try:
        started = control.start(env=env)
        folder = Path(started["socket"]).parent
        assert folder.parent == Path(os.environ.get("TMPDIR", "/tmp"))
        assert folder.name.startswith("contextd-") and len(folder.name) > len("contextd-") + 6
        assert folder.stat().st_mode & 0o777 == 0o700
        assert (home / "daemon.socket").read_text(encoding="utf-8") == started["socket"] + "\n"
        assert to_daemon.ask(str(home), {"kind": "ping"}) is not None
        control.contextd("daemon", "stop", env=env)
        assert not folder.exists()
    finally:
        control.shutdown()


def test_a_socket_left_by_a_dead_daemon_is_replaced_and_a_stranger_file_is_not(
    daemons: Daemons, repo: Path, home: Path
) -> None:
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(home / "daemon.sock"))  # ours, but nobody listens
    stale.close()
    started = daemons.start()
    daemons.contextd("daemon", "stop")
    assert wait_gone(int(started["pid"]), 10)
    (home / "daemon.sock").write_text("not a socket", encoding="utf-8")
    refused = subprocess.run(
        [sys.executable, "-m", "contextd", "daemon", "start"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=repo,
        env=hook_env(),
        timeout=120,
        check=False,
    )
    assert refused.returncode != 0
    assert f"The daemon socket {home}/daemon.sock belongs to uid" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert (home / "daemon.sock").read_text(encoding="utf-8") == "not a socket"  # untouched


def _record(home: Path, target: Path) -> None:
    (home / "daemon.socket").write_text(f"{target}\n", encoding="utf-8")
    (home / "daemon.socket").chmod(0o600)


def test_a_client_refuses_a_socket_in_a_folder_open_to_others(
    repo: Path, home: Path, tmp_path: Path
) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    loose.chmod(0o755)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(loose / "daemon.sock"))
        listener.listen(1)
        _record(home, loose / "daemon.sock")
        with pytest.raises(rendezvous.Unsafe, match="with mode 755"):
            to_daemon.ask(str(home), {"kind": "ping"})
        searched = subprocess.run(
            [sys.executable, "-m", "contextd", "search", "task queue"],
            capture_output=True,
            text=True,
            encoding="utf-8",
            cwd=repo,
            env=hook_env(),
            timeout=120,
            check=False,
        )
    assert searched.returncode == 0, searched.stderr
    assert "with mode 755, not to you" in searched.stderr
    assert "Answering without the daemon." in searched.stderr


def test_a_home_others_can_write_is_not_trusted_for_its_record(home: Path) -> None:
    home.chmod(0o777)
    try:
        with pytest.raises(rendezvous.Unsafe, match="can be changed by another user"):
            rendezvous.find(str(home))
    finally:
        home.chmod(0o700)


class _Impostor:
    """A listener of this user at a recorded socket, keeping every byte it receives."""

    def __init__(self, folder: Path, home: Path) -> None:
        self.received: list[bytes] = []
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(folder / "daemon.sock"))
        self.listener.listen(8)
        self.listener.settimeout(0.2)
        _record(home, folder / "daemon.sock")
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    head, body = frames.read(conn)
                    self.received.append(head + body)
                except (frames.BadFrame, OSError):
                    continue
                conn.sendall(frames.encode(b'{"ok": false, "error": "recorded"}'))

    def close(self) -> None:
        self.stopping.set()
        self.thread.join(5)
        self.listener.close()


def test_the_clients_environment_never_reaches_the_daemon(
    repo: Path, run: Cli, home: Path, tmp_path: Path
) -> None:
    run.json(*DECISION)
    impostor = _Impostor(_private(tmp_path / "sock"), home)
    env = hook_env(
        CANARY_TOKEN=CANARY,
        GITHUB_TOKEN=CANARY,
        AWS_SECRET_ACCESS_KEY=CANARY,
        CONTEXTD_PROJECT="orbit",
    )
    try:
        hooked = run_hook(
            "prompt",
            user_prompt(repo, "Why did we pick NATS for the task queue after the deploy?"),
            cwd=repo,
            env=env,
        )
        searched = subprocess.run(
            [sys.executable, "-m", "contextd", "search", "task queue", "--json"],
            capture_output=True,
            cwd=repo,
            env=env,
            timeout=120,
            check=False,
        )
    finally:
        impostor.close()
    assert len(impostor.received) == 2  # one request each, and both then worked in-process
    assert b'"kind": "hook"' in impostor.received[0]
    assert b'"kind": "search"' in impostor.received[1]
    for received in impostor.received:
        assert CANARY.encode() not in received
        assert b"PATH" not in received and b"argv" not in received
        assert b'"project": "orbit"' in received  # what the client resolved, by name
    assert "Use NATS for the task queue" in hooked.context
    assert searched.returncode == 0 and b"Use NATS" in searched.stdout


def test_twenty_hooks_and_searches_at_once_all_answer(
    daemons: Daemons, repo: Path, run: Cli, home: Path, tmp_path: Path
) -> None:
    nats = run.json(*DECISION)["id"]
    postgres = run.json(*POSTGRES)["id"]
    billing = make_repo(tmp_path / "billing", "git@github.com:acme/billing.git")
    run("attach", str(billing))
    daemons.start()
    stamp = to_daemon.code_stamp()
    answers: dict[int, object] = {}

    def ask(n: int) -> None:
        folder = billing if n % 4 == 3 else repo
        if n % 2:
            payload = json.dumps(user_prompt(folder, f"{DECISION[3]} again? ({n})", f"s{n}"))
            request = {"kind": "hook", "home": str(home), "stamp": stamp, "event": "prompt"}
            request |= {"project": None, "folder": str(folder)}
            reply = to_daemon.ask(str(home), request, payload.encode(), timeout=60)
            answers[n] = reply[1].decode() if reply else None
        else:
            request = {"kind": "search", "home": str(home), "stamp": stamp, "project": None}
            request |= {"folder": str(folder), "query": {"text": "task queue postgres"}}
            reply = to_daemon.ask(str(home), request, timeout=60)
            answers[n] = reply[0]["answer"] if reply else None

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert sorted(answers) == list(range(20)) and None not in answers.values()
    for n, answer in answers.items():
        in_billing = n % 4 == 3
        if n % 2:
            assert isinstance(answer, str)
            assert (nats in answer) != in_billing, n  # another project's note never shows
        else:
            assert isinstance(answer, dict)
            ids = {hit["view"]["id"] for hit in answer["hits"]}
            assert ids == {nats, postgres}, n
