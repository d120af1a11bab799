"""Another local user against a contextd home and its daemon, for real: a second account made
with useradd, its processes run under its uid. Needs root and useradd; skipped otherwise.

The stranger's side runs the system's Python with the standard library only (it needs no
contextd to attack a socket or read a file)."""

import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from contextd.wire import frames, rendezvous, to_daemon
from tests.conftest import DECISION, Cli
from tests.daemon._support import Daemons
from tests.hooks._support import hook_env

STRANGER = "contextd-stranger"
SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin")


@pytest.fixture(scope="session")
def stranger() -> pwd.struct_passwd:
    if os.geteuid() != 0 or shutil.which("useradd") is None or SYSTEM_PYTHON is None:
        pytest.skip("needs root, useradd and a system python3 to act as a second user")
    try:
        return pwd.getpwnam(STRANGER)
    except KeyError:
        pass
    made = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", STRANGER],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    if made.returncode != 0:
        pytest.skip(f"useradd failed: {made.stderr.strip()}")
    return pwd.getpwnam(STRANGER)


@pytest.fixture
def open_base() -> Iterator[Path]:
    """A folder every user may pass through (tmp_path's parents are root's alone)."""
    base = Path(tempfile.mkdtemp(prefix="contextd-shared-"))
    base.chmod(0o755)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def as_stranger(
    who: pwd.struct_passwd, code: str, *, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    assert SYSTEM_PYTHON is not None
    return subprocess.run(
        [SYSTEM_PYTHON, "-I", "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        user=who.pw_uid,
        group=who.pw_gid,
        extra_groups=[],
        env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"},
        cwd="/",
        timeout=timeout,
        check=False,
    )


def test_a_home_made_under_umask_022_is_closed_to_another_user(
    stranger: pwd.struct_passwd, open_base: Path, tmp_path: Path
) -> None:
    home = open_base / "victim-home"
    made = subprocess.run(
        [sys.executable, "-m", "contextd", "--home", str(home), "init"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=hook_env(),
        cwd=tmp_path,
        umask=0o022,
        timeout=120,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    names = sorted(p.name for p in home.iterdir())
    assert "contextd.db" in names and "config.toml" in names
    probe = as_stranger(
        stranger,
        f"""
        import os
        home = {str(home)!r}
        for name in [None, *{names!r}]:
            path = home if name is None else os.path.join(home, name)
            try:
                os.listdir(path) if name is None else open(path, "rb").read(1)
                print("READ", path)
            except PermissionError:
                print("DENIED", path)
        """,
    )
    assert "READ" not in probe.stdout and probe.stdout.count("DENIED") == len(names) + 1


def test_another_user_cannot_reach_or_plant_the_daemons_socket(
    stranger: pwd.struct_passwd, daemons: Daemons, repo: Path, run: Cli, home: Path
) -> None:
    run.json(*DECISION)
    socket_path = daemons.start()["socket"]
    probe = as_stranger(
        stranger,
        f"""
        import os, socket
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect({socket_path!r})
            print("CONNECTED")
        except PermissionError:
            print("NO CONNECT")
        for name in ("daemon.socket", "daemon.sock", "planted"):
            try:
                open(os.path.join({str(home)!r}, name), "w")
                print("PLANTED", name)
            except PermissionError:
                print("NO PLANT")
        """,
    )
    assert probe.stdout.split("\n")[:4] == ["NO CONNECT", "NO PLANT", "NO PLANT", "NO PLANT"]


def test_a_socket_another_user_planted_is_refused_and_named(
    stranger: pwd.struct_passwd, open_base: Path, home: Path, repo: Path, run: Cli
) -> None:
    run.json(*DECISION)
    nest = open_base / "nest"
    nest.mkdir(mode=0o700)
    os.chown(nest, stranger.pw_uid, stranger.pw_gid)
    planted = nest / "daemon.sock"
    listener = subprocess.Popen(
        [
            str(SYSTEM_PYTHON),
            "-I",
            "-c",
            textwrap.dedent(
                f"""
                import os, socket, sys, time
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.bind({str(planted)!r}); os.chmod({str(planted)!r}, 0o777); s.listen(4)
                print("ready", flush=True)
                while True:
                    conn, _ = s.accept()
                    data = conn.recv(65536)
                    sys.stderr.write(repr(data) + "\\n"); sys.stderr.flush()
                    conn.close()
                """
            ),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        user=stranger.pw_uid,
        group=stranger.pw_gid,
        extra_groups=[],
        env={"PATH": "/usr/bin:/bin"},
        cwd="/",
    )
    try:
        assert listener.stdout is not None and listener.stdout.readline() == "ready\n"
        # As if the stranger could write the home's record: the client checks before it talks.
        (home / "daemon.socket").write_text(f"{planted}\n", encoding="utf-8")
        with pytest.raises(rendezvous.Unsafe, match=f"belongs to uid {stranger.pw_uid}"):
            to_daemon.ask(str(home), {"kind": "ping"})
        searched = subprocess.run(
            [sys.executable, "-m", "contextd", "search", "task queue"],
            capture_output=True,
            text=True,
            encoding="utf-8",
            cwd=repo,
            env=hook_env(GITHUB_TOKEN="ghp_canary"),
            timeout=120,
            check=False,
        )
        assert searched.returncode == 0 and "Use NATS" in searched.stdout
        assert f"belongs to uid {stranger.pw_uid}" in searched.stderr
        started = subprocess.run(
            [sys.executable, "-m", "contextd", "daemon", "start"],
            capture_output=True,
            text=True,
            encoding="utf-8",
            cwd=repo,
            env=hook_env(),
            timeout=120,
            check=False,
        )
        assert started.returncode != 0 and "Traceback" not in started.stderr
        assert f"belongs to uid {stranger.pw_uid}" in started.stderr
        # Connected anyway (root may), the peer's uid gives the stranger away.
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(str(planted))
            with pytest.raises(rendezvous.Unsafe, match=f"runs as uid {stranger.pw_uid}"):
                rendezvous.check_peer(conn, "daemon")
    finally:
        listener.kill()
        _, received = listener.communicate(timeout=10)
    assert set(received.split()) <= {"b''"}  # connections came, but never a byte


def test_the_daemon_refuses_a_client_of_another_user(
    stranger: pwd.struct_passwd, open_base: Path, repo: Path
) -> None:
    home = open_base / "home"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text('[embeddings]\nprovider = "hashing"\n', encoding="utf-8")
    control = Daemons(home, repo)
    try:
        socket_path = control.start(env=hook_env(CONTEXTD_HOME=str(home)))["socket"]
        home.chmod(0o711)  # let the stranger reach the socket, to see the daemon say no
        os.chmod(socket_path, 0o666)
        probe = as_stranger(
            stranger,
            f"""
            import socket, sys
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.settimeout(10)
            conn.connect({socket_path!r})
            try:
                conn.sendall({frames.encode(b'{"kind": "ping"}')!r})
            except BrokenPipeError:
                pass  # the daemon may refuse and close before reading a byte
            sys.stdout.write(conn.recv(65536)[13:].decode())
            """,
        )
        home.chmod(0o700)
        assert probe.stdout == '{"ok": false, "error": "not the daemon\'s user"}', probe.stderr
        deadline = time.monotonic() + 10
        log = home / "daemon.log"
        while f"runs as uid {stranger.pw_uid}" not in log.read_text(encoding="utf-8"):
            assert time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        home.chmod(0o700)
        control.shutdown()


SETPRIV = shutil.which("setpriv")
UNPRIVILEGED = [str(SETPRIV), "--bounding-set=-all", "--inh-caps=-all"]  # root as anyone
HOME_ADVICE = "give a home of your own with --home or $CONTEXTD_HOME (default ~/.contextd)."


@pytest.fixture
def strangers_home(stranger: pwd.struct_passwd, open_base: Path, tmp_path: Path) -> Path:
    """A contextd home of the second user's, in a folder of theirs closed to others."""
    theirs = open_base / "theirs"
    home = theirs / "home"
    made = subprocess.run(
        [sys.executable, "-m", "contextd", "--home", str(home), "init"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=hook_env(),
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    for path in [theirs, *theirs.rglob("*")]:
        os.chown(path, stranger.pw_uid, stranger.pw_gid)
    theirs.chmod(0o700)
    return home


def _listing(home: Path) -> list[tuple[str, int, int]]:
    return sorted((str(p), p.stat().st_uid, p.stat().st_mtime_ns) for p in home.rglob("*"))


@pytest.mark.parametrize(
    "args",
    [["status"], ["search", "task queue"], ["mcp", "serve"]],
    ids=["click", "fast path", "mcp relay"],
)
@pytest.mark.parametrize("privileged", [True, False], ids=["as root", "as an ordinary user"])
def test_a_home_of_another_user_is_refused_in_one_sentence(
    stranger: pwd.struct_passwd,
    strangers_home: Path,
    repo: Path,
    args: list[str],
    privileged: bool,
) -> None:
    if not privileged and SETPRIV is None:
        pytest.skip("needs setpriv to drop root's capabilities")
    before = _listing(strangers_home)
    done = subprocess.run(
        [*([] if privileged else UNPRIVILEGED), sys.executable, "-m", "contextd", *args]
        + ["--home", str(strangers_home)],
        input="",
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=repo,
        env=hook_env(),
        timeout=120,
        check=False,
    )
    if privileged:
        expected = (
            f"Error: {strangers_home} belongs to another user (uid {stranger.pw_uid}), not to "
            f"you (uid 0); contextd keeps each person's memory apart, so {HOME_ADVICE}\n"
        )
    else:
        expected = f"Error: Cannot reach {strangers_home}: a folder on its path is closed to you; "
        expected += f"{HOME_ADVICE}\n"
    assert (done.returncode, done.stderr, done.stdout) == (5, expected, "")
    assert _listing(strangers_home) == before


def test_a_hook_in_a_home_of_another_user_stays_silent_and_writes_nothing_there(
    strangers_home: Path, repo: Path
) -> None:
    before = _listing(strangers_home)
    done = subprocess.run(
        [sys.executable, "-m", "contextd", "hook", "session-start"],
        input="{}",
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=repo,
        env=hook_env(CONTEXTD_HOME=str(strangers_home)),
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert _listing(strangers_home) == before
