"""A real OpenSSH server on a loopback port, with its own host key, client key and config."""

import getpass
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

SSHD = shutil.which("sshd") or ("/usr/sbin/sshd" if Path("/usr/sbin/sshd").exists() else None)


@dataclass(frozen=True)
class SshServer:
    port: int
    config: Path  # an ssh_config defining the Host alias `lab`
    user_home: Path  # $HOME of the sessions it opens (holds .profile)
    process: subprocess.Popen[bytes]

    @property
    def options(self) -> list[str]:
        """--ssh-option arguments that make ssh use this server's config."""
        return ["--ssh-option=-F", f"--ssh-option={self.config}"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


def start_sshd(folder: Path) -> SshServer:
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    _keygen(folder / "host_key")
    _keygen(folder / "client_key")
    (folder / "authorized_keys").write_text(
        (folder / "client_key.pub").read_text(encoding="utf-8"), encoding="utf-8"
    )
    user_home = folder / "account"
    user_home.mkdir()
    port = _free_port()
    user = getpass.getuser()
    (folder / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {folder / 'host_key'}\n"
        f"AuthorizedKeysFile {folder / 'authorized_keys'}\nStrictModes no\n"
        f"PidFile {folder / 'sshd.pid'}\nUsePAM no\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
        "PermitRootLogin prohibit-password\n"
        f"AllowUsers {user}\nSetEnv HOME={user_home}\n",
        encoding="utf-8",
    )
    (folder / "ssh_config").write_text(
        f"Host lab\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n"
        f"  IdentityFile {folder / 'client_key'}\n  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {folder / 'known_hosts'}\n  StrictHostKeyChecking accept-new\n"
        "  LogLevel ERROR\n",
        encoding="utf-8",
    )
    assert SSHD is not None
    if os.geteuid() == 0:  # sshd running as root insists on its privilege-separation folder
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    with (folder / "sshd.log").open("wb") as log:
        process = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(folder / "sshd_config")],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError((folder / "sshd.log").read_text(encoding="utf-8"))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return SshServer(port, folder / "ssh_config", user_home, process)
