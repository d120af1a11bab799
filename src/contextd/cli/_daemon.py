"""CLI writes stored by the running daemon: its model is warm, so a write costs a round trip
instead of loading the model in this process. The daemon applies the same rules; when it
refuses, or none runs, the command stores the record itself (and reports any refusal in its
own words)."""

import os
from typing import Any

import msgspec

from contextd.cli._context import get_settings
from contextd.errors import DaemonError
from contextd.ipc import client
from contextd.ipc.rendezvous import Unsafe
from contextd.models import RecordDraft, Stored

__all__ = ["stored_by_daemon"]


def stored_by_daemon(
    draft: RecordDraft, *, force: bool, supersedes: tuple[str, ...]
) -> Stored | None:
    """The record as the daemon stored it; None when the command must store it itself.

    Raises:
        DaemonError: the daemon took the write and did not answer in time.
    """
    if os.environ.get("CONTEXTD_DEBUG"):
        return None
    settings = get_settings()
    request: dict[str, Any] = {
        "kind": "write",
        "home": str(settings.home),
        "stamp": client.code_stamp(),
        "project": settings.project,
        "folder": str(settings.cwd),
        "draft": msgspec.to_builtins(draft),
        "force": force,
        "supersedes": list(supersedes),
    }
    try:
        reply = client.ask(str(settings.home), request, repeatable=False)
    except Unsafe as exc:
        from contextd.cli._output import warn

        warn(f"contextd: {exc} Writing without the daemon.")
        return None
    except client.Unanswered:
        raise DaemonError(
            "The daemon took the write but did not answer in time; `contextd memories` shows "
            "whether it was stored."
        ) from None
    if reply is None:
        return None
    try:
        return msgspec.convert(reply[0].get("stored"), type=Stored)
    except msgspec.ValidationError:
        return None
