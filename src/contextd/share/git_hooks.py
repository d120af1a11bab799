"""A pre-commit hook in the repository that refuses record files contextd would refuse: a
secret typed into one by hand never reaches the remote."""

import os
import shlex
from collections.abc import Sequence
from pathlib import Path

from msgspec import Struct

from contextd.errors import InvalidInputError
from contextd.gitinfo import GitError, git_path

__all__ = ["HookInstalled", "install_pre_commit"]

MARKER = "# contextd: refuse record files that hold a secret or break the record rules"


class HookInstalled(Struct, frozen=True):
    path: str
    action: str  # "installed" or "already installed"


def install_pre_commit(folder: Path, contextd: Sequence[str]) -> HookInstalled:
    """Write the pre-commit hook of the git work tree holding `folder` (core.hooksPath and
    worktrees respected), running `contextd` (the words that start this contextd: git's PATH
    may not hold it); a hook of someone else's is left alone.

    Raises:
        InvalidInputError: not a git work tree, or another pre-commit hook is there.
    """
    try:
        path = Path(git_path(folder, "hooks/pre-commit"))
    except GitError as exc:
        raise InvalidInputError(f"{folder} is not in a git work tree ({exc}).") from None
    check = shlex.join([*contextd, "share", "--check"])
    command = f"exec {check}"
    script = f"#!/bin/sh\n{MARKER}\n{command}\n"
    if path.exists():
        current = path.read_text(encoding="utf-8", errors="replace")
        if MARKER not in current:
            raise InvalidInputError(
                f"{path} already holds a pre-commit hook; add this line to it yourself: {check}"
            )
        if current == script:
            return HookInstalled(str(path), "already installed")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(script, encoding="utf-8")
    os.chmod(path, 0o755)  # git runs it; nothing secret in it
    return HookInstalled(str(path), "installed")
