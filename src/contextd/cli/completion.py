"""`contextd completion bash|zsh|fish`: the shell's completion script, click's own."""

import click
from click.shell_completion import get_completion_class

from contextd.text.printer import echo

__all__ = ["COMMANDS"]

SHELLS = ("bash", "zsh", "fish")
# The variable click's completion reads; its name follows from the program's (contextd).
COMPLETE_VAR = "_CONTEXTD_COMPLETE"


@click.command()
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell: str) -> None:
    """Print the completion script for SHELL.

    \b
    Examples:
      eval "$(contextd completion bash)"        # in ~/.bashrc
      eval "$(contextd completion zsh)"         # in ~/.zshrc
      contextd completion fish > ~/.config/fish/completions/contextd.fish
    """
    from contextd.cli.main import cli

    completer = get_completion_class(shell)
    assert completer is not None  # every one of SHELLS is click's
    echo(completer(cli, {}, "contextd", COMPLETE_VAR).source(), nl=False)


COMMANDS = [completion]
