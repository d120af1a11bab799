"""`contextd search` and `contextd recall` answered by the running daemon.

The standard library only: this runs before click, the store or numpy are imported, and a
warm answer is the whole point. The client sends its argv, working folder, environment and
how its terminal looks; the daemon runs the very same click command in-process (see
contextd.cli.served) and returns the exit code and what it printed on each stream, in order.
Anything short of that (no daemon, a daemon of another home or of other contextd code, a
timeout, a refusal) returns None, and the CLI runs in-process as usual.
"""

import os
import sys

from contextd.daemon import client

__all__ = ["FORWARDED", "Command", "code_stamp", "command_of", "forward", "parse_answer"]

FORWARDED = frozenset({"search", "recall"})  # read-only: nothing a stale answer could harm
_TIMEOUT_S = 5.0  # a reload of a large matrix after many writes can take a second or two
_ROOT_FLAGS = frozenset({"--json"})
_ROOT_VALUED = frozenset({"--home", "--project"})
_MARK = b"CLI\n"


class Command:
    """A client's command as the daemon receives it. On the wire: `CLI` on a line, then NUL-
    separated fields (no argument, path or environment entry can hold a NUL), which spares
    the client importing json (a tenth of its time)."""

    __slots__ = ("argv", "color", "cwd", "env", "stamp", "streams")

    def __init__(
        self,
        stamp: str,
        argv: list[str],
        cwd: str,
        env: dict[str, str],
        color: bool,
        streams: tuple[tuple[str, str], tuple[str, str]],
    ) -> None:
        self.stamp, self.argv, self.cwd, self.env = stamp, argv, cwd, env
        self.color = color
        self.streams = streams  # (encoding, errors) of stdout, then of stderr

    def encode(self) -> bytes:
        (out_encoding, out_errors), (err_encoding, err_errors) = self.streams
        head = [self.stamp, self.cwd, "1" if self.color else "0"]
        head += [out_encoding, out_errors, err_encoding, err_errors, str(len(self.argv))]
        fields = [*head, *self.argv, *(f"{name}={value}" for name, value in self.env.items())]
        return _MARK + b"\0".join(os.fsencode(field) for field in fields)

    @classmethod
    def decode(cls, data: bytes) -> "Command | None":
        """The command `data` carries, or None when it is not one."""
        if not data.startswith(_MARK):
            return None
        fields = [os.fsdecode(field) for field in data[len(_MARK) :].split(b"\0")]
        if len(fields) < 8 or not fields[7].isdigit() or len(fields) < 8 + int(fields[7]):
            return None
        stamp, cwd, color, out_encoding, out_errors, err_encoding, err_errors = fields[:7]
        argv = fields[8 : 8 + int(fields[7])]
        entries = (entry.partition("=") for entry in fields[8 + len(argv) :])
        env = {name: value for name, equals, value in entries if equals}
        streams = ((out_encoding, out_errors), (err_encoding, err_errors))
        return cls(stamp, argv, cwd, env, color == "1", streams)


def forward(argv: list[str]) -> int | None:
    """Run `contextd ARGV` on the daemon and print its answer: the exit code, or None when the
    caller must run the command in-process (nothing has been printed then)."""
    command, home = command_of(argv)
    if command not in FORWARDED or os.environ.get("CONTEXTD_DEBUG"):
        return None  # CONTEXTD_DEBUG asks for tracebacks, which only the in-process CLI shows
    out, err = sys.stdout, sys.stderr
    if out is None or err is None or out.isatty() != err.isatty():
        return None  # click colours both streams alike; the daemon cannot tell them apart
    try:
        cwd = os.getcwd()
    except OSError:
        return None
    home = os.path.join(cwd, os.path.expanduser(home or client.home_dir()))
    if not os.path.exists(client.socket_path(home)):
        return None
    streams = ((out.encoding, out.errors or "strict"), (err.encoding, err.errors or "strict"))
    request = Command(code_stamp(), argv, cwd, _environment(), out.isatty(), streams)
    try:
        answer = client.ask_raw(home, request.encode(), _TIMEOUT_S)
    except KeyboardInterrupt:
        err.write("Interrupted.\n")
        return 130
    parsed = parse_answer(answer) if answer is not None else None
    if parsed is None:
        return None
    code, chunks = parsed
    return _print(chunks, code)


def command_of(argv: list[str]) -> tuple[str | None, str | None]:
    """The command argv runs (after the root's --json/--home/--project) and the --home it
    names; (None, None) when argv starts with anything else (--help, --version, a typo)."""
    home: str | None = None
    at = 0
    while at < len(argv):
        arg = argv[at]
        name, _, value = arg.partition("=")
        if arg in _ROOT_FLAGS:
            at += 1
        elif arg in _ROOT_VALUED and at + 1 < len(argv):
            home = argv[at + 1] if arg == "--home" else home
            at += 2
        elif name in _ROOT_VALUED and value:
            home = value if name == "--home" else home
            at += 1
        else:
            break
    if at >= len(argv) or argv[at].startswith("-"):
        return None, None
    rest = argv[at + 1 :]
    for i, arg in enumerate(rest):  # a --home after the command overrides the root's
        if arg == "--":
            break
        if arg == "--home" and i + 1 < len(rest) and rest[i + 1]:
            home = rest[i + 1]
        elif arg.startswith("--home=") and len(arg) > 7:
            home = arg[7:]
    return argv[at], home


def code_stamp(root: str | None = None) -> str:
    """Which contextd code this is (the package at `root`, by default this one): its folder
    and the count, newest change time and total size of its sources (what Python checks to
    trust a .pyc). A daemon started before an upgrade or an edit has another stamp and is
    not handed a newer client's argv."""
    root = root or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    count = newest = size = 0
    folders = [root]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.name.endswith(".py"):
                    stat = entry.stat()
                    count, size = count + 1, size + stat.st_size
                    newest = max(newest, stat.st_mtime_ns)
                elif entry.name != "__pycache__" and entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
    return f"{root}:{count}:{newest}:{size}"


def _environment() -> dict[str, str]:
    """The environment to run the command in, with the terminal's width in COLUMNS when the
    width would come from the terminal (the daemon has none)."""
    env = dict(os.environ)
    try:
        columns = int(env.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0 and sys.__stdout__ is not None:
        try:
            measured = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (ValueError, OSError):
            measured = 0
        if measured > 0:
            env["COLUMNS"] = str(measured)
    return env


def parse_answer(answer: bytes) -> tuple[int, list[tuple[int, bytes]]] | None:
    """`EXIT\\n` then `FD LENGTH\\n` + bytes per write, in the order they were written."""
    head, newline, rest = answer.partition(b"\n")
    if not newline or not head.isdigit():
        return None
    chunks: list[tuple[int, bytes]] = []
    while rest:
        frame, newline, rest = rest.partition(b"\n")
        fd, _, length = frame.partition(b" ")
        if not newline or fd not in (b"1", b"2") or not length.isdigit():
            return None
        size = int(length)
        if size > len(rest):
            return None
        chunks.append((int(fd), rest[:size]))
        rest = rest[size:]
    return int(head), chunks


def _print(chunks: list[tuple[int, bytes]], code: int) -> int:
    try:
        for fd, data in chunks:
            stream = sys.stdout if fd == 1 else sys.stderr
            stream.flush()
            stream.buffer.write(data)
            stream.buffer.flush()
    except BrokenPipeError:  # the reader went away (`| head`): end quietly, as the CLI does
        sys.stderr.close()
        return 0
    return code
