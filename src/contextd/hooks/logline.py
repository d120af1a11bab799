"""What a failed hook may write to hook.log: the kind of failure and contextd's own wording,
never the text of the agent's payload (a prompt, a command, a file's content)."""

import re

__all__ = ["failure_detail"]

_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
_LIMIT = 300


def failure_detail(exc: BaseException) -> str:
    """`Type: message`, with every quoted value in the message blanked (exceptions quote the
    values they choke on, which may come from the payload), clipped, and no secret kept."""
    message = " ".join(_QUOTED.sub("'…'", str(exc)).split())
    if len(message) > _LIMIT:
        message = message[: _LIMIT - 1] + "…"
    message = _without_secrets(message)
    name = type(exc).__name__
    return f"{name}: {message}" if message else name


def _without_secrets(text: str) -> str:
    try:
        from contextd.credentials.scan import find_secrets
    except Exception:  # a hook logs its failure even when contextd itself is broken
        return "(message withheld)"
    for finding in reversed(find_secrets(text)):
        text = text[: finding.start] + "[secret removed]" + text[finding.end :]
    return text
