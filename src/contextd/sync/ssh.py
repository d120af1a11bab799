"""Running contextd on another machine through the system `ssh`.

The remote command prints its payload between two marker lines, so whatever a login shell
prints around it (a banner, a motd) is ignored.
"""

import shlex
from pathlib import Path
from typing import NamedTuple

from msgspec import Struct

from contextd.core.workspace.capped import Cap
from contextd.errors import RemoteError
from contextd.sync.pipes import TooLong, TooMuch, run_bounded

__all__ = [
    "BEGIN",
    "END",
    "Limits",
    "RemoteSpec",
    "local_expansion_note",
    "remote_script",
    "run_remote",
]

BEGIN = "<<<contextd-payload-begin>>>"
END = "<<<contextd-payload-end>>>"
_NOT_FOUND = 127
_SSH_FAILED = 255
_MARGIN = 64 * 1024  # room for a login shell's banner and the markers around the payload


class RemoteSpec(Struct, frozen=True):
    """How to reach contextd on another machine."""

    target: str  # [user@]host, or a Host alias from ~/.ssh/config
    login_shell: bool = False
    command: str | None = None  # contextd's path there when it is not on the PATH
    remote_home: str | None = None  # the store there, when not $CONTEXTD_HOME or ~/.contextd
    ssh_options: tuple[str, ...] = ()


def remote_word(value: str) -> str:
    """Quote `value` for the remote shell, leaving a leading ~/ or $HOME/ for it to expand."""
    for prefix in ("~/", "$HOME/", "${HOME}/"):
        if value.startswith(prefix):
            rest = value[len(prefix) :]
            return '"$HOME"/' + shlex.quote(rest) if rest else '"$HOME"'
    if value in ("~", "$HOME", "${HOME}"):
        return '"$HOME"'
    return shlex.quote(value)


def remote_script(spec: RemoteSpec, args: list[str]) -> str:
    """The shell text ssh runs there: contextd with `args`, its output between markers."""
    program = remote_word(spec.command or "contextd")
    home = f" --home {remote_word(spec.remote_home)}" if spec.remote_home else ""
    call = f"{program} {' '.join(shlex.quote(a) for a in args)}{home}"
    script = (
        f"command -v {program} >/dev/null 2>&1 || exit {_NOT_FOUND}; "
        f"printf '\\n%s\\n' '{BEGIN}'; {call}; status=$?; "
        f"printf '\\n%s\\n' '{END}'; exit $status"
    )
    if spec.login_shell:
        return f'exec "${{SHELL:-/bin/sh}}" -lc {shlex.quote(script)}'
    return script


def ssh_command(spec: RemoteSpec, script: str, *, batch: bool) -> list[str]:
    mode = ["-o", "BatchMode=yes"] if batch else []
    # ssh keeps the first value it reads for an option, so the user's own options win.
    return ["ssh", *spec.ssh_options, *mode, "-o", "ConnectTimeout=20", spec.target, script]


class Limits(NamedTuple):
    """What a remote operation may cost: the most it reads from ssh, and its whole time."""

    output: Cap
    seconds: float


def run_remote(
    spec: RemoteSpec, args: list[str], *, batch: bool, limits: Limits, stdin: bytes | None = None
) -> str:
    """Run `contextd ARGS` over ssh and return what it printed between the markers.

    Raises:
        RemoteError: ssh failed, contextd is not found there, it reported an error, it sent
            more than `limits` allow or did not finish in time.
    """
    argv = ssh_command(spec, remote_script(spec, args), batch=batch)
    try:
        done = run_bounded(
            argv, stdin or b"", out_cap=limits.output.size + _MARGIN, seconds=limits.seconds
        )
    except FileNotFoundError:
        raise RemoteError(
            "The ssh command is not installed on this machine; install the OpenSSH client."
        ) from None
    except TooMuch:
        raise RemoteError(limits.output.refusal(f"What contextd on {spec.target} sent")) from None
    except TooLong:
        raise RemoteError(_too_long(spec, limits.seconds)) from None
    stdout = done.stdout.decode("utf-8", errors="replace")
    stderr = done.stderr.decode("utf-8", errors="replace")
    payload = _between_markers(stdout)
    if done.returncode == 0 and payload is not None:
        return payload
    raise _failure(spec, done.returncode, stderr, payload is not None)


def _too_long(spec: RemoteSpec, seconds: float) -> str:
    return (
        f"ssh {spec.target} did not finish within {seconds:g} s, the most a remote operation "
        f"may take; check that `ssh {spec.target} true` returns at once, or if the link is "
        f"that slow allow more with `contextd config set sync.remote_timeout_s {seconds * 2:g}`."
    )


def _between_markers(stdout: str) -> str | None:
    start = stdout.find(f"\n{BEGIN}\n")
    end = stdout.rfind(f"\n{END}\n")
    if start < 0 or end < start:
        return None
    return stdout[start + len(BEGIN) + 2 : end]


def _failure(spec: RemoteSpec, code: int, stderr: str, started: bool) -> RemoteError:
    said = _last_words(stderr)
    if started:
        reason = said.removeprefix("Error: ") or f"it exited with status {code}"
        return RemoteError(f"contextd on {spec.target} failed: {reason}")
    if code == _NOT_FOUND:
        return RemoteError(_not_found(spec))
    if code == _SSH_FAILED:
        return RemoteError(
            f"ssh {spec.target} failed: {said or 'no message'}; check the host, the account "
            "and your key (ssh-copy-id), or pass --interactive to answer a password prompt."
        )
    return RemoteError(
        f"{spec.target} answered without contextd output (exit status {code}"
        f"{': ' + said if said else ''}); check the remote's --command."
    )


def _not_found(spec: RemoteSpec) -> str:
    if spec.command:
        note = local_expansion_note(spec.command, Path.home()) or ""
        return (
            f"{spec.command} is not an executable contextd on {spec.target}; give its full "
            f"path there with --command (e.g. '~/.local/bin/contextd', quoted).{note}"
        )
    return (
        f"contextd was not found on the PATH of non-interactive shells on {spec.target}; if it "
        "is installed there, re-add the remote with --command /full/path/to/contextd or with "
        "--login-shell (reads the login profile that extends PATH)."
    )


def _last_words(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("Error: ")]
    return (errors[-1] if errors else " ".join(lines[-3:])).rstrip(".")


def local_expansion_note(value: str, local_home: Path) -> str | None:
    """A warning when `value` starts with this machine's home folder, as happens when the
    local shell expanded an unquoted ~ before contextd saw it."""
    home = str(local_home).rstrip("/")
    if not home or not (value == home or value.startswith(home + "/")):
        return None
    rest = value[len(home) :].lstrip("/")
    return (
        f" {value} starts with this machine's home folder {home}: an unquoted ~ was expanded "
        f"here, so if the remote account's home differs write it quoted as '~/{rest}'."
    )
