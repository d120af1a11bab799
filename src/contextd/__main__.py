"""The `contextd` command (and `python -m contextd`).

`contextd hook EVENT` runs on every prompt and edit of an agent, so it is dispatched here,
before the CLI (click and every command module) is imported; so are `search`, `recall` and
the record commands, which a running daemon answers warm, and `mcp serve`, which a running
daemon hosts while this process relays. contextd.client does each of those with the standard
library only; when no daemon answers, the work is done here, in this process, by the code
that needs the store.
"""

import os
import sys

from contextd.threads import choose_for_one_shot

# Commands contextd.client.quick may have a running daemon answer (it checks the argv itself).
_DAEMON_ANSWERS = {"search", "recall", "add", "decide", "constrain", "pipeline", "checkpoint"}


def main() -> None:
    os.umask(0o077)  # whatever contextd creates is its user's alone
    choose_for_one_shot()  # before numpy can load (see contextd.threads)
    if sys.argv[1:2] == ["hook"]:
        from contextd.client.hook import run_hook

        sys.exit(run_hook(sys.argv[2:], _hook_in_process, _hook_failure, own_process=True))
    _refuse_undecodable_arguments(sys.argv[1:])
    if {"mcp", "serve"}.issubset(sys.argv[1:]):
        from contextd.client.relay import serve

        code = serve(sys.argv[1:])
        if code is not None:
            sys.exit(code)
    if _DAEMON_ANSWERS.intersection(sys.argv[1:]):
        from contextd.client.quick import answer

        code = answer(sys.argv[1:])
        if code is not None:
            sys.exit(code)
    from contextd.cli.main import main as cli_main

    cli_main()


def _hook_in_process(event: str, raw: bytes) -> str:
    from contextd.hooks.inprocess import answer_in_process  # no daemon: the slow path

    return answer_in_process(event, raw)


def _hook_failure(exc: BaseException) -> str:
    from contextd.hooks.logline import failure_detail

    return failure_detail(exc)


def _refuse_undecodable_arguments(argv: list[str]) -> None:
    """Python hands bytes that are not UTF-8 over as lone surrogates, which no store, file or
    terminal can take: refuse them here in one sentence (exit 2), before any work."""
    for number, argument in enumerate(argv, 1):
        if any("\ud800" <= c <= "\udfff" for c in argument):
            message = (
                f"Argument {number} is not valid UTF-8 text; contextd reads only UTF-8 (check "
                "the terminal's encoding, or the name of the file given)."
            )
            if "--json" in argv:
                import json

                error = {"error": {"message": message, "type": "InvalidInputError"}}
                sys.stdout.write(json.dumps(error) + "\n")
            sys.stderr.write(f"Error: {message}\n")
            sys.exit(2)


if __name__ == "__main__":
    main()
