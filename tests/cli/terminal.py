"""`contextd` as a real process on a real terminal (a pty), for what only a terminal gets:
colours, the pager, progress bars."""

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import uuid
from dataclasses import dataclass
from pathlib import Path

# `contextd ARGS` as the console script runs it, noting the modules it imported: a run the
# daemon answered never loads click.
CLIENT = (
    "import atexit, os, sys\n"
    "out = os.environ['CONTEXTD_TEST_MODULES']\n"
    "atexit.register(lambda: open(out, 'w', encoding='utf-8').write('\\n'.join(sys.modules)))\n"
    "sys.argv[0] = 'contextd'\n"
    "from contextd.__main__ import main\n"
    "main()\n"
)


@dataclass(frozen=True)
class Shown:
    code: int
    screen: str  # stdout and stderr as the terminal got them
    modules: frozenset[str]

    @property
    def warm(self) -> bool:
        return "click" not in self.modules


def on_terminal(
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    rows: int = 24,
    columns: int = 100,
    stdin: str | None = None,
) -> Shown:
    """Run `contextd ARGS` with stdout and stderr on a terminal of `rows` x `columns`; its
    exit code, everything it showed there and the modules it loaded. `stdin` is piped in
    when given."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    modules = cwd.parent / f"modules-{uuid.uuid4().hex}"
    environment |= {"TERM": "xterm", "CONTEXTD_TEST_MODULES": str(modules)} | (env or {})
    with subprocess.Popen(
        [sys.executable, "-c", CLIENT, *args],
        stdin=subprocess.PIPE if stdin is not None else slave,
        stdout=slave,
        stderr=slave,
        cwd=cwd,
        env=environment,
    ) as process:
        os.close(slave)
        if stdin is not None and process.stdin is not None:
            process.stdin.write(stdin.encode())
            process.stdin.close()
        output = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the process closed the terminal
                break
            if not chunk:
                break
            output += chunk
        process.wait(120)
    os.close(master)
    loaded = frozenset(modules.read_text(encoding="utf-8").split("\n"))
    modules.unlink()
    return Shown(process.returncode, output.decode("utf-8", "replace"), loaded)
