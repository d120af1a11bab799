"""The `contextd` command (and `python -m contextd`).

`contextd hook EVENT` runs on every prompt and edit of an agent, so it is dispatched here,
before the CLI (click and every command module) is imported; so are `search` and `recall`,
which a running daemon answers warm.
"""

import os
import sys


def main() -> None:
    os.umask(0o077)  # whatever contextd creates is its user's alone
    if sys.argv[1:2] == ["hook"]:
        from contextd.hooks.entry import run_hook

        sys.exit(run_hook(sys.argv[2:]))
    if "search" in sys.argv or "recall" in sys.argv:
        from contextd.cli.quick import answer

        code = answer(sys.argv[1:])
        if code is not None:
            sys.exit(code)
    from contextd.cli.main import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
